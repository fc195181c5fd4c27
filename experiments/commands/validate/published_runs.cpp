#include "commands/validate/published_runs.hpp"

#include <cstdint>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim::cli::validate {
namespace {

// One 8-GPU row of llm-foundry's table "A100 80GB with 1600 Gbps node-node interconnect (RoCE)"
// (mosaicml/llm-foundry @8c8dd48f, scripts/train/benchmarking/README.md): FSDP FULL_SHARD, amp_bf16,
// Triton FlashAttention, as submit_benchmarks.py at b2a43a1 ran them.
struct LlmFoundryRow {
  const char* model;  // the table's name of the model's yaml
  std::int64_t seq_len;
  int micro_batches;  // the table's GradAccum
  std::int64_t global_batch;
  double tokens_per_second;
  bool activation_checkpointing;
};

// The table's rows in its order.
constexpr LlmFoundryRow kLlmFoundryRows[] = {
    {"30b", 8192, 21, 168, 4594, true},     {"30b", 4096, 21, 168, 6513, true},
    {"30b", 2048, 21, 504, 7330, true},     {"30b", 1024, 21, 1008, 7571, true},
    {"30b", 512, 21, 2016, 7739, true},     {"13b", 32768, 3, 24, 8134, true},
    {"13b", 16384, 3, 72, 11454, true},     {"13b", 8192, 3, 120, 14362, true},
    {"13b", 4096, 3, 240, 16482, true},     {"13b", 2048, 3, 48, 18097, false},
    {"13b", 1024, 3, 960, 18647, true},     {"7b", 65536, 2, 16, 8108, true},
    {"7b", 32768, 2, 32, 13382, true},      {"7b", 16384, 2, 64, 19629, true},
    {"7b", 8192, 2, 128, 25655, true},      {"7b", 4096, 2, 256, 29472, true},
    {"7b", 2048, 2, 96, 37130, false},      {"7b", 1024, 2, 1024, 34857, true},
    {"3b", 65536, 2, 16, 14137, true},      {"3b", 32768, 6, 144, 24235, true},
    {"3b", 16384, 6, 48, 44233, false},     {"3b", 8192, 6, 144, 61567, false},
    {"3b", 4096, 6, 240, 75658, false},     {"3b", 2048, 2, 160, 86491, false},
    {"3b", 1024, 6, 960, 92643, false},     {"3b", 512, 6, 1920, 97019, false},
    {"1b", 65536, 2, 16, 24353, true},      {"1b", 32768, 4, 32, 50207, false},
    {"1b", 16384, 4, 64, 79650, false},     {"1b", 8192, 4, 96, 110516, false},
    {"1b", 4096, 4, 224, 142457, false},    {"1b", 2048, 4, 448, 164109, false},
    {"1b", 1024, 4, 576, 176898, false},    {"1b", 512, 4, 1792, 185186, false},
    {"760m", 65536, 2, 16, 33150, true},    {"760m", 32768, 2, 16, 70417, false},
    {"760m", 16384, 2, 48, 114198, false},  {"760m", 8192, 2, 96, 167471, false},
    {"760m", 4096, 2, 192, 218808, false},  {"760m", 2048, 2, 384, 259472, false},
    {"760m", 1024, 2, 768, 238122, false},  {"760m", 512, 2, 1536, 235571, false},
    {"350m", 65536, 2, 16, 60195, false},   {"350m", 32768, 2, 32, 109222, false},
    {"350m", 16384, 2, 64, 188478, false},  {"350m", 8192, 2, 128, 292559, false},
    {"350m", 4096, 2, 256, 396442, false},  {"350m", 2048, 2, 512, 470263, false},
    {"350m", 1024, 2, 1024, 518504, false}, {"350m", 512, 2, 2048, 554643, false},
    {"125m", 65536, 2, 16, 162946, false},  {"125m", 32768, 2, 32, 291256, false},
    {"125m", 16384, 2, 64, 480322, false},  {"125m", 8192, 2, 128, 723142, false},
    {"125m", 4096, 2, 256, 947172, false},  {"125m", 2048, 2, 640, 1142641, false},
    {"125m", 2048, 2, 512, 1133901, false}, {"125m", 1024, 2, 1024, 1251751, false},
    {"125m", 512, 2, 2048, 1325455, false},
};

// The MPT shapes of llm-foundry's scripts/train/yamls/pretrain/ (layers, d_model, heads): GPT-2 blocks with
// biases, learned positions, a tied vocabulary of 50,368.
struct MptShape {
  const char* model;
  const char* name;
  int layers, hidden, heads;
};
constexpr MptShape kMptShapes[] = {
    {"125m", "MPT-125M", 12, 768, 12}, {"350m", "MPT-350M", 24, 1024, 16}, {"760m", "MPT-760M", 24, 1536, 12},
    {"1b", "MPT-1B", 24, 2048, 16},    {"3b", "MPT-3B", 32, 2560, 20},     {"7b", "MPT-7B", 32, 4096, 32},
    {"13b", "MPT-13B", 40, 5120, 40},  {"30b", "MPT-30B", 48, 7168, 56},
};

constexpr const char* kLlmFoundrySource =
    "mosaicml/llm-foundry @8c8dd48f scripts/train/benchmarking/README.md, A100 80GB (RoCE)";

const MptShape& mpt_shape(std::string_view model) {
  for (const MptShape& shape : kMptShapes)
    if (shape.model == model) return shape;
  throw std::logic_error(fmt::format("no MPT shape named {}", model));
}

// FSDP FULL_SHARD under Composer's DEFAULT mixed precision (float32 param shards, float32 reduce-scatter),
// each micro-batch reduce-scattered, updated in place, no cap on the gathered parameters; Triton's
// FlashAttention; no dropout.
PublishedRun llm_foundry_run(const LlmFoundryRow& row) {
  const MptShape& shape = mpt_shape(row.model);
  const double tokens = static_cast<double>(row.global_batch * row.seq_len);
  return {fmt::format("{}, s = {}, {} x {} per GPU{}", shape.name, row.seq_len, row.micro_batches,
                      row.global_batch / (8 * row.micro_batches),
                      row.activation_checkpointing ? ", checkpointing" : ""),
          1000 * tokens / row.tokens_per_second, true, kLlmFoundrySource,
          fmt::format("--model custom --layers {} --hidden {} --heads {} --seq-len {} --vocab 50368 --preset "
                      "dgx_a100 --devices 8 --batch {} --micro-batches {} --strategy zero3 --dropout off "
                      "--attention fused-triton --donate-state on --max-live-parameters 1000000000000 "
                      "--reduce-dtype f32 --param-shard-dtype f32{}",
                      shape.layers, shape.hidden, shape.heads, row.seq_len, row.global_batch,
                      row.micro_batches, row.activation_checkpointing ? " --recompute full" : "")};
}

std::vector<PublishedRun> make_llm_foundry_runs() {
  std::vector<PublishedRun> runs;
  for (const LlmFoundryRow& row : kLlmFoundryRows) runs.push_back(llm_foundry_run(row));
  return runs;
}

// The training code's own figures, written when it was released (28 November 2022), on flash-attn 1.x.
constexpr const char* kFlashAttention =
    "Dao-AILab/flash-attention training/configs/experiment/owt/base.yaml (comment of 2022-11-28)";
constexpr const char* kFlashAttention1 = "--attention fused-fa1";
constexpr const char* kGpt2Small = "--model gpt2_small";
constexpr const char* kGpt2Medium =
    "--model custom --layers 24 --hidden 1024 --heads 16 --seq-len 1024 --vocab 50257";

std::vector<PublishedRun> make_validation_runs() {
  std::vector<PublishedRun> runs = {
      {"GPT-2 small, 8x A100 80GB, 64 x 1024 per GPU, fp16, DDP, FlashAttention", 376, false, kFlashAttention,
       fmt::format("{} --preset dgx_a100 --devices 8 --batch 512 {}", kGpt2Small, kFlashAttention1)},
      {"the same with apex FusedAdam", 368, false, kFlashAttention,
       fmt::format("{} --preset dgx_a100 --devices 8 --batch 512 --fused-optimizer {}", kGpt2Small,
                   kFlashAttention1)},
      {"GPT-2 medium, same setup, FusedAdam", 972, false, kFlashAttention,
       fmt::format("{} --preset dgx_a100 --devices 8 --batch 512 --fused-optimizer {}", kGpt2Medium,
                   kFlashAttention1)},
      {"GPT-3 125M shape at s = 2048, 8x A100 80GB, 0.5M tokens per step", 1000 * 524288 / 1.310e6, true,
       "Dao-AILab/flash-attention training/README.md: 1,310k tokens/s",
       fmt::format("--model custom --layers 12 --hidden 768 --heads 12 --seq-len 2048 --vocab 50257 "
                   "--preset dgx_a100 --devices 8 --batch 256 --fused-optimizer {}",
                   kFlashAttention1)},
      {"GPT-3 355M shape at s = 2048, same", 1000 * 524288 / 503e3, true,
       "Dao-AILab/flash-attention training/README.md: 503k tokens/s",
       fmt::format("--model custom --layers 24 --hidden 1024 --heads 16 --seq-len 2048 --vocab 50257 "
                   "--preset dgx_a100 --devices 8 --batch 256 --fused-optimizer {}",
                   kFlashAttention1)},
      {"llm.c GPT-2 124M, 8x A100 80GB, 64 x 1024 per GPU, bf16, ZeRO-1", 300, false,
       "karpathy/llm.c scripts/run_gpt2_124M.sh: ~300ms/iter",
       fmt::format("{} --preset dgx_a100 --devices 8 --batch 512 --strategy zero1 --dropout off",
                   kGpt2Small)},
      {"llm.c GPT-2 124M, 8x H100, same config", 140, false,
       "KellerJordan/modded-nanogpt records/.../2024-10-13_llmc: mean 140 ms",
       fmt::format("{} --preset dgx_h100 --devices 8 --batch 512 --strategy zero1 --dropout off",
                   kGpt2Small)},
      {"llm.c GPT-2 350M, 8x A100 80GB, 64 x 1024 per GPU, ZeRO-1", 820, false,
       "karpathy/llm.c scripts/run_gpt2_350M.sh: ~820ms/iter",
       fmt::format("{} --preset dgx_a100 --devices 8 --batch 512 --strategy zero1 --dropout off",
                   kGpt2Medium)},
      {"llm.c GPT-2 774M, 8x A100 80GB, 2 x 32 x 1024 per GPU, ZeRO-1", 1700, false,
       "karpathy/llm.c scripts/run_gpt2_774M.sh: ~1.7s/iter",
       "--model custom --layers 36 --hidden 1280 --heads 20 --seq-len 1024 --vocab 50257 --preset dgx_a100 "
       "--devices 8 --batch 512 --micro-batches 2 --strategy zero1 --dropout off"},
      {"llm.c GPT-2 1558M, 8x H100, 8 x 16 x 1024 per GPU, ZeRO-1", 2800, false,
       "karpathy/llm.c scripts/run_gpt2_1558M.sh: 2.80s/iter",
       "--model custom --layers 48 --hidden 1600 --heads 25 --seq-len 1024 --vocab 50257 --preset dgx_h100 "
       "--devices 8 --batch 1024 --micro-batches 8 --strategy zero1 --dropout off"},
      {"nanoGPT, 8x A100 40GB, 12 x 1024 x 5 per GPU, bf16, torch.compile, FA 1.x", 563, false,
       "karpathy/nanoGPT#110: ~560-567 ms",
       fmt::format("{} --preset dgx_a100_40gb --devices 8 --batch 480 --micro-batches 5 --dropout off {}",
                   kGpt2Small, kFlashAttention1)},
  };
  // MosaicML's MPT rows at the models' own 2,048 tokens, smallest model first.
  for (auto row = std::rbegin(kLlmFoundryRows); row != std::rend(kLlmFoundryRows); ++row)
    if (row->seq_len == 2048) runs.push_back(llm_foundry_run(*row));
  return runs;
}

}  // namespace

const std::vector<PublishedRun>& validation_runs() {
  static const std::vector<PublishedRun> runs = make_validation_runs();
  return runs;
}

const std::vector<PublishedRun>& llm_foundry_runs() {
  static const std::vector<PublishedRun> runs = make_llm_foundry_runs();
  return runs;
}

}  // namespace spmdsim::cli::validate
