// The transformer cost model against the published counts and formulas. Every expected figure is written out
// here from its source (the GPT-2 / Megatron parameter layout, Narayanan et al. 2021 and Megatron-LM's FLOP
// count, Korthikanti et al. 2022's activation memory), never read from the code under test. On a device the
// pass is run on abstract arrays and measured from the simulation's report: the matmul spans times the
// device's peak give the charged FLOPs (compute is the only limit: infinite memory bandwidth, no launch
// overhead), and the memory timeline gives what was kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/transformer.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Helpers

constexpr double kPeak = 1e12;  // FLOP/s, every dtype

// One device whose only limit is its peak: an op takes exactly flops / kPeak.
topologies::SwitchClusterSpec flop_counting_device() {
  auto spec = testing::free_compute_cluster(1);
  spec.device.peak_flops = {{DType::f32, kPeak}, {DType::bf16, kPeak}};
  spec.device.memory_capacity = std::numeric_limits<double>::infinity();
  return spec;
}

CallReport last_call(const Simulation& sim, const std::string& name) {
  const auto calls = sim.report().calls;
  auto it = std::find_if(calls.rbegin(), calls.rend(), [&](const CallReport& c) { return c.name == name; });
  if (it == calls.rend()) throw std::runtime_error("no call named " + name);
  return *it;
}

// FLOPs the device was charged for the kernels named `kernel` in a call.
double kernel_flops(const CallReport& call, std::string_view kernel) {
  double seconds = 0;
  for (const Span& span : call.spans[0])
    if (span.name == kernel) seconds += span.end - span.start;
  return seconds * kPeak;
}
double matmul_flops(const CallReport& call) {
  return kernel_flops(call, "matmul");
}

// Korthikanti et al.'s counts are of the materialised attention.
TransformerConfig naive(TransformerConfig config) {
  config.attention = Attention::naive;
  return config;
}

// The most bytes device 0 held under `tag` at any one time, from its memory timeline.
double tag_peak(const Simulation& sim, MemoryTag tag) {
  const SimulationReport report = sim.report();
  double live = 0;
  double peak = 0;
  for (const MemoryEvent& event : report.memory_timelines[0])
    if (event.tag == tag) peak = std::max(peak, live += event.delta);
  return peak;
}

std::string recompute_test_name(const ::testing::TestParamInfo<Recompute>& param) {
  return std::string(recompute_name(param.param));
}

std::int64_t leaf_elements(const Tree& tree) {
  std::int64_t n = 0;
  for (const Array& leaf : tree.leaves()) n += leaf.size();
  return n;
}

// GPT-2 / Megatron layout, written out: per block two LayerNorms (2h each), qkv h x 3h + 3h, proj h x h + h,
// fc h x f + f, proj f x h + h; token (V x h) and position (s x h) embeddings; final LayerNorm 2h; untied
// models add an h x V head.
double hand_parameters(double L, double h, double s, double V, double f, bool tied) {
  const double block = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h);
  return L * block + V * h + s * h + 2 * h + (tied ? 0 : h * V);
}

// Megatron-LM's num_floating_point_operations (training.py, after Narayanan et al. 2021, appendix), per token
// of a training step without recomputation: 12 L h^2 (2 + s/h + f/h + V/(2 L h)) for multi-head attention.
double megatron_training_flops_per_token(double L, double h, double s, double V, double f) {
  return 12 * L * h * h * (2 + s / h + f / h + V / (2 * L * h));
}

// ---------------------------------------------------------------------------------------------------------
// Parameter counts

TEST(TransformerParameters, Gpt2SmallHasTheReleasedCheckpointsCount) {
  const Transformer gpt2(gpt2_small());
  // 12 (12h^2 + 13h) + Vh + sh + 2h at h = 768: the count of the released GPT-2 small (tied embeddings).
  EXPECT_EQ(hand_parameters(12, 768, 1024, 50257, 4 * 768, true), 124'439'808.0);
  EXPECT_EQ(gpt2.num_parameters(), 124'439'808);
  EXPECT_EQ(gpt2.parameters_per_block(), 12 * 768 * 768 + 13 * 768);
  EXPECT_EQ(leaf_elements(gpt2.init_abstract()), 124'439'808);
}

TEST(TransformerParameters, Gpt3IsThePublished175B) {
  const Transformer gpt3(gpt3_175b());
  const double ours = hand_parameters(96, 12288, 2048, 50257, 4 * 12288, true);
  EXPECT_EQ(ours, 174'604'259'328.0);
  EXPECT_EQ(gpt3.num_parameters(), 174'604'259'328);
  // Brown et al. 2020, Table 2.1: 175.0B.
  EXPECT_NEAR(ours / 175.0e9, 1.0, 0.003);
}

TEST(TransformerParameters, SevenBHasLlama7BsShapeAndSize) {
  const Transformer model(gpt_7b());
  const double ours = hand_parameters(32, 4096, 2048, 32000, 4 * 4096, false);
  EXPECT_EQ(ours, 6'714'695'680.0);
  EXPECT_EQ(model.num_parameters(), 6'714'695'680);
  EXPECT_EQ(leaf_elements(model.init_abstract()), 6'714'695'680);
  // Touvron et al. 2023, Table 2: 6.7B (LLaMA's SwiGLU, RMSNorm and rotary positions differ from GPT-2's).
  EXPECT_NEAR(ours / 6.7e9, 1.0, 0.01);
}

TEST(TransformerParameters, FfnSizeAndUntiedHeadAreCounted) {
  const TransformerConfig config{.layers = 3,
                                 .hidden = 40,
                                 .heads = 5,
                                 .seq_len = 16,
                                 .vocab = 101,
                                 .ffn_hidden = 96,
                                 .tied_embeddings = false};
  const Transformer model(config);
  EXPECT_EQ(static_cast<double>(model.num_parameters()), hand_parameters(3, 40, 16, 101, 96, false));
  EXPECT_EQ(leaf_elements(model.init_abstract()), model.num_parameters());
}

// ---------------------------------------------------------------------------------------------------------
// FLOPs per token

TEST(TransformerFlops, SevenBPerTokenMatchesNarayananAndMegatron) {
  const Transformer model(gpt_7b());
  const double L = 32, h = 4096, s = 2048, V = 32000;
  // Forward, Narayanan et al. 2021: 24 L h^2 (1 + s/(6h)) + 2hV.
  const double forward = 24 * L * h * h * (1 + s / (6 * h)) + 2 * h * V;
  EXPECT_EQ(forward, 14'220'787'712.0);
  EXPECT_DOUBLE_EQ(model.forward_flops_per_token(), forward);
  // A step: backward twice the forward, written in Megatron's form.
  EXPECT_EQ(megatron_training_flops_per_token(L, h, s, V, 4 * h), 42'662'363'136.0);
  EXPECT_DOUBLE_EQ(model.training_flops_per_token(Recompute::none), 42'662'363'136.0);
  // Full recompute, Narayanan et al. 2021 per iteration: 96 B s L h^2 (1 + s/(6h) + V/(16 L h)), per token.
  const double full = 96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  EXPECT_EQ(full, 56'621'006'848.0);
  EXPECT_DOUBLE_EQ(model.training_flops_per_token(Recompute::full), full);
  // Selective: one more forward of q k^T and probs v, 2sh FLOPs each per token and layer.
  EXPECT_DOUBLE_EQ(model.training_flops_per_token(Recompute::selective), 42'662'363'136.0 + L * 4 * s * h);
}

TEST(TransformerFlops, Gpt3AndAnFfnOtherThan4hFollowMegatronsCount) {
  const double L = 96, h = 12288, s = 2048, V = 50257;
  EXPECT_DOUBLE_EQ(Transformer(gpt3_175b()).training_flops_per_token(),
                   72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)));
  const Transformer odd(
      {.layers = 3, .hidden = 40, .heads = 5, .seq_len = 16, .vocab = 101, .ffn_hidden = 96});
  EXPECT_DOUBLE_EQ(odd.training_flops_per_token(), megatron_training_flops_per_token(3, 40, 16, 101, 96));
}

// ---------------------------------------------------------------------------------------------------------
// Activation memory per block (Korthikanti et al. 2022)

TEST(TransformerActivations, SevenBPerBlockMatchesKorthikanti) {
  const Transformer model(naive(gpt_7b()));
  const double s = 2048, b = 1, h = 4096, a = 32;
  EXPECT_EQ(s * b * h * (34 + 5 * a * s / h), 956'301'312.0);  // Eq. 1, no parallelism, 16-bit
  EXPECT_EQ(model.activation_bytes_per_block(1), 956'301'312.0);
  EXPECT_EQ(model.activation_bytes_per_block(1, Recompute::selective), 34 * s * b * h);
  EXPECT_EQ(model.activation_bytes_per_block(1, Recompute::full), 2 * s * b * h);
  EXPECT_EQ(model.activation_bytes_per_block(4), 4 * 956'301'312.0);
}

// Fused attention keeps no [s, s] tensor: Korthikanti's selective figure plus the float32 log-sum-exp, under
// none and selective alike.
TEST(TransformerActivations, FusedAttentionKeepsNoScores) {
  const Transformer model(gpt_7b());
  const double s = 2048, b = 1, h = 4096, a = 32;
  EXPECT_EQ(model.activation_bytes_per_block(1), 34 * s * b * h + 4 * a * s * b);
  EXPECT_EQ(model.activation_bytes_per_block(1, Recompute::selective), 34 * s * b * h + 4 * a * s * b);
  EXPECT_EQ(model.activation_bytes_per_block(1, Recompute::full), 2 * s * b * h);
  EXPECT_EQ(model.fused_attention_forward_flops(1), 2 * s * s * h);
  // PaLM's model FLOPs: 6N + 12 L h s per token.
  EXPECT_EQ(model.model_flops_per_token(), 6 * 6'714'695'680.0 + 12 * 32 * h * s);
}

// ---------------------------------------------------------------------------------------------------------
// On a device: one block

// Small enough to run in a blink; h/a = 8, s != h so that no term can stand in for another.
const TransformerConfig kSmall{.layers = 2, .hidden = 64, .heads = 8, .seq_len = 32, .vocab = 96};
constexpr std::int64_t kBatch = 3;

struct BlockMeasure {
  MemoryByTag after_forward;
  MemoryByTag after_backward;
};

class TransformerBlock : public ::testing::TestWithParam<Recompute> {};

// A block's forward keeps exactly Korthikanti's bytes; forward and backward charge 3x the forward matmul
// FLOPs plus what recomputation reruns; at the end only the block's gradients are left.
TEST_P(TransformerBlock, KeepsKorthikantisBytesAndChargesThreeForwards) {
  const Recompute recompute = GetParam();
  const Transformer model(naive(kSmall));
  const double s = 32, b = kBatch, h = 64, a = 8, f = 4 * h;
  Simulation sim(topologies::switch_cluster(flop_counting_device()));
  const Tree block = model.init_abstract(DType::bf16)[1];
  // The block's input is made on the device (a cast), so that the block's backward can release it.
  const Array x = Array::abstract({1, kBatch * 32, 64}, DType::f32);

  BlockMeasure seen;
  auto forward_only = pmap(
      [&](const Args& args) -> Tree {
        BlockForward fwd =
            model.block_forward(args[0].tree(), astype(args[1].array(), DType::bf16), recompute);
        seen.after_forward = live_memory();
        return Tree(fwd.out);
      },
      {.in_axes = Axes::tuple({none, 0}), .out_axes = Axes(0), .name = "forward"});
  forward_only(sim, {block, x});
  auto both = pmap(
      [&](const Args& args) -> Tree {
        BlockForward fwd =
            model.block_forward(args[0].tree(), astype(args[1].array(), DType::bf16), recompute);
        BlockBackward bwd = model.block_backward(args[0].tree(), std::move(fwd.saved), fwd.out);
        fwd.out = Array();
        seen.after_backward = live_memory();
        return Tree(bwd.dx);
      },
      {.in_axes = Axes::tuple({none, 0}), .out_axes = Axes(0), .name = "forward_backward"});
  both(sim, {block, x});

  // Korthikanti et al. 2022: sbh (34 + 5as/h) bytes with 16-bit activations; 34 sbh selective; 2 sbh full.
  const double kept = recompute == Recompute::none        ? s * b * h * (34 + 5 * a * s / h)
                      : recompute == Recompute::selective ? 34 * s * b * h
                                                          : 2 * s * b * h;
  EXPECT_EQ(seen.after_forward[tags::activations], kept);
  EXPECT_EQ(seen.after_backward[tags::activations], 0);
  EXPECT_EQ(seen.after_backward[tags::gradients], 2 * (12 * h * h + 13 * h));

  // Forward matmuls per token: qkv 6h^2, proj 2h^2, fc and proj 2hf each, q k^T and probs v 2sh each.
  const double forward = b * s * (8 * h * h + 4 * h * f + 4 * s * h);
  const double recomputed = recompute == Recompute::none        ? 0
                            : recompute == Recompute::selective ? b * s * 4 * s * h
                                                                : forward;
  EXPECT_NEAR(matmul_flops(last_call(sim, "forward")), forward, 1e-9 * forward);
  EXPECT_NEAR(matmul_flops(last_call(sim, "forward_backward")), 3 * forward + recomputed, 1e-9 * forward);
}

INSTANTIATE_TEST_SUITE_P(Transformer, TransformerBlock,
                         ::testing::Values(Recompute::none, Recompute::selective, Recompute::full),
                         recompute_test_name);

// With fused attention a block keeps 34 sbh + 4 asb bytes (no scores, the float32 log-sum-exp); the
// attention's two score matmuls leave the matmul kernels for one flash_attention kernel forward (2 b s^2 h,
// causal) and one backward (2.5x); every other matmul is charged as before.
// One block of `model`, forward then backward, on kSmall's input, as the call "forward_backward"; returns the
// device's live memory between the two.
MemoryByTag block_forward_backward(Simulation& sim, const Transformer& model) {
  const Tree block = model.init_abstract(DType::bf16)[1];
  const Array x = Array::abstract({1, kBatch * 32, 64}, DType::f32);
  MemoryByTag after_forward;
  auto both = pmap(
      [&](const Args& args) -> Tree {
        BlockForward fwd = model.block_forward(args[0].tree(), astype(args[1].array(), DType::bf16));
        after_forward = live_memory();
        return Tree(model.block_backward(args[0].tree(), std::move(fwd.saved), fwd.out).dx);
      },
      {.in_axes = Axes::tuple({none, 0}), .out_axes = Axes(0), .name = "forward_backward"});
  both(sim, {block, x});
  return after_forward;
}

TEST(TransformerBlock, FusedAttentionKeepsNoScoresAndChargesTheKernelsOwnCount) {
  const double s = 32, b = kBatch, h = 64, a = 8, f = 4 * h;
  Simulation sim(topologies::switch_cluster(flop_counting_device()));
  EXPECT_EQ(block_forward_backward(sim, Transformer(kSmall))[tags::activations],
            34 * s * b * h + 4 * a * s * b);
  const CallReport call = last_call(sim, "forward_backward");
  const double projections = b * s * (8 * h * h + 4 * h * f);
  EXPECT_NEAR(matmul_flops(call), 3 * projections, 1e-9 * projections);
  EXPECT_NEAR(kernel_flops(call, "flash_attention"), 2 * b * s * s * h, 1e-9 * projections);
  EXPECT_NEAR(kernel_flops(call, "flash_attention_backward"), 2.5 * 2 * b * s * s * h, 1e-9 * projections);
}

// fused-fa1 and fused-triton are the fused kernel at the rate of FlashAttention 1.x's and its Triton
// kernel's curves: the same FLOPs and memory, charged at that curve's fraction of the peak where fused takes
// FlashAttention-2's.
TEST(TransformerBlock, FusedAttentionRunsAtItsKernelsCurve) {
  const double s = 32, b = kBatch, h = 64, a = 8;
  auto spec = flop_counting_device();
  spec.device.attention = {{64, {{32, 0.5}}, AttentionKernel::flash2},
                           {64, {{32, 0.4}}, AttentionKernel::flash1},
                           {64, {{32, 0.25}}, AttentionKernel::flash_triton}};
  Simulation sim(topologies::switch_cluster(spec));
  for (const Attention attention : {Attention::fused, Attention::fused_fa1, Attention::fused_triton}) {
    SCOPED_TRACE(attention_name(attention));
    TransformerConfig config = kSmall;
    config.attention = attention;
    EXPECT_EQ(block_forward_backward(sim, Transformer(config))[tags::activations],
              34 * s * b * h + 4 * a * s * b);
    const double fraction = attention == Attention::fused       ? 0.5
                            : attention == Attention::fused_fa1 ? 0.4
                                                                : 0.25;
    const CallReport call = last_call(sim, "forward_backward");
    const double count = 2 * b * s * s * h;
    EXPECT_NEAR(kernel_flops(call, "flash_attention"), count / fraction, 1e-9 * count);
    EXPECT_NEAR(kernel_flops(call, "flash_attention_backward"), 2.5 * count / fraction, 1e-9 * count);
  }
}

// Without dropout a block keeps no mask and the attention-over-v matmul reads the probabilities themselves:
// 32 sbh (+ 2as^2b of probabilities, naive, none; + 4asb of log-sum-exp, fused), as the closed form says;
// the matmuls charged are the same as with dropout.
TEST(TransformerBlock, WithoutDropoutKeepsNoMasks) {
  const double s = 32, b = kBatch, h = 64, a = 8;
  const Array x = Array::abstract({1, kBatch * 32, 64}, DType::f32);
  Simulation sim(topologies::switch_cluster(flop_counting_device()));
  for (const Attention attention : {Attention::naive, Attention::fused})
    for (const Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
      SCOPED_TRACE(
          fmt::format("attention {}, recompute {}", attention_name(attention), recompute_name(recompute)));
      TransformerConfig config = kSmall;
      config.attention = attention;
      const Transformer with(config);
      config.dropout = false;
      const Transformer without(config);
      const Tree block = without.init_abstract(DType::bf16)[1];
      MemoryByTag after_forward;
      const auto run = [&](const Transformer& model, const std::string& name) {
        auto both = pmap(
            [&](const Args& args) -> Tree {
              BlockForward fwd =
                  model.block_forward(args[0].tree(), astype(args[1].array(), DType::bf16), recompute);
              after_forward = live_memory();
              BlockBackward bwd = model.block_backward(args[0].tree(), std::move(fwd.saved), fwd.out);
              fwd.out = Array();
              EXPECT_EQ(live_memory()[tags::activations], 0);
              return Tree(bwd.dx);
            },
            {.in_axes = Axes::tuple({none, 0}), .out_axes = Axes(0), .name = name});
        both(sim, {block, x});
      };
      run(without, "without");
      const double kept = recompute == Recompute::full ? 2 * s * b * h
                          : attention == Attention::fused
                              ? 32 * s * b * h + 4 * a * s * b
                              : 32 * s * b * h + (recompute == Recompute::none ? 2 * a * s * s * b : 0);
      EXPECT_EQ(after_forward[tags::activations], kept);
      EXPECT_EQ(without.activation_bytes_per_block(kBatch, recompute), kept);
      run(with, "with");
      const double flops = matmul_flops(last_call(sim, "with"));
      EXPECT_NEAR(matmul_flops(last_call(sim, "without")), flops, 1e-12 * flops);
    }
}

// ---------------------------------------------------------------------------------------------------------
// On a device: the whole 7B step

class TransformerStep : public ::testing::TestWithParam<Recompute> {};

// The 7B model's loss and gradients for one sequence: the charged matmul FLOPs are the closed form per token
// times the tokens, the gradients are 2 bytes per parameter, and the activations peak at L blocks' worth.
TEST_P(TransformerStep, SevenBChargesTheClosedFormAndHoldsEveryBlocksActivations) {
  const Recompute recompute = GetParam();
  const Transformer model(naive(gpt_7b()));
  const double L = 32, h = 4096, s = 2048, V = 32000, a = 32, b = 1;
  Simulation sim(topologies::switch_cluster(flop_counting_device()));
  const Tree params = model.init_abstract(DType::bf16);
  MemoryByTag at_end;
  bool grads_like_params = false;
  auto step = pmap(
      [&](const Args& args) -> Tree {
        LossAndGrads lg = model.value_and_grad(tag_as(args[0].tree(), tags::parameters), args[1].array(),
                                               args[2].array(), recompute);
        at_end = live_memory();
        grads_like_params = lg.grads.same_structure(params);
        return Tree(lg.loss);
      },
      {.in_axes = Axes::tuple({none, 0, 0}), .out_axes = Axes(none), .name = "step"});
  step(sim, {params, Array::abstract({1, 1, 2048}, DType::i32), Array::abstract({1, 1, 2048}, DType::i32)});

  const double tokens = b * s;
  const double recomputed = recompute == Recompute::none        ? 0
                            : recompute == Recompute::selective ? L * 4 * s * h
                                                                : 24 * L * h * h * (1 + s / (6 * h));
  const double expected = tokens * (megatron_training_flops_per_token(L, h, s, V, 4 * h) + recomputed);
  EXPECT_NEAR(matmul_flops(last_call(sim, "step")), expected, 1e-9 * expected);

  EXPECT_TRUE(grads_like_params);
  EXPECT_EQ(at_end[tags::gradients], 2 * 6'714'695'680.0);
  EXPECT_EQ(at_end[tags::activations], 0);

  // The peak: under none, at the end of the forward pass, L blocks of Korthikanti's bytes plus the head's
  // ln_f input and output (2sbh each). Under selective, at the last block's backward, when it has recomputed
  // its 5as^2b bytes of scores while the head's tensors are gone. Under full, while the last block reruns its
  // forward: L - 1 kept inputs plus one whole block.
  const double sbh = s * b * h;
  const double whole_block = sbh * (34 + 5 * a * s / h);
  const double peak = recompute == Recompute::none        ? L * whole_block + 4 * sbh
                      : recompute == Recompute::selective ? L * 34 * sbh + 5 * a * s * s * b
                                                          : (L - 1) * 2 * sbh + whole_block;
  EXPECT_EQ(tag_peak(sim, tags::activations), peak);
}

INSTANTIATE_TEST_SUITE_P(Transformer, TransformerStep,
                         ::testing::Values(Recompute::none, Recompute::selective, Recompute::full),
                         recompute_test_name);

// ---------------------------------------------------------------------------------------------------------
// The loss

// With a vocabulary far larger than the blocks the step peaks at the loss, where the unfused form holds three
// [b*s, V] tensors (the logits, their copy and the log-probabilities; then those and both gradients) and the
// fused one two (the logits and their gradient).
TEST(TransformerLoss, UnfusedHoldsOneMoreLogitsSizedTensorAtThePeak) {
  const double b = 2, s = 16, V = 4096;
  Simulation sim(topologies::switch_cluster(flop_counting_device()));
  const auto peak = [&](LossForm loss) {
    const Transformer model(
        TransformerConfig{.layers = 1, .hidden = 8, .heads = 1, .seq_len = 16, .vocab = 4096, .loss = loss});
    const Tree params = model.init_abstract(DType::bf16);
    const std::string name(loss_form_name(loss));
    pmap(
        [&](const Args& args) -> Tree {
          return Tree(
              model.value_and_grad(args[0].tree(), args[1].array(), args[2].array(), Recompute::none).loss);
        },
        {.in_axes = Axes::tuple({none, 0, 0}), .out_axes = Axes(none), .name = name})(
        sim, {params, Array::abstract({1, 2, 16}, DType::i32), Array::abstract({1, 2, 16}, DType::i32)});
    return last_call(sim, name).memory.at(0).peak;
  };
  EXPECT_EQ(peak(LossForm::unfused) - peak(LossForm::fused), b * s * V * 2);
}

// The units are fetched as a ZeRO-3 or FSDP hook would see them: forward in order, the tied token embedding
// again for the logits, backward in reverse.
TEST(TransformerFetch, UnitsComeInForwardThenReverseOrder) {
  const Transformer model(kSmall);
  const Tree params = model.init_abstract(DType::bf16);
  std::vector<int> order;
  model.value_and_grad(
      [&](int unit) {
        order.push_back(unit);
        return params[static_cast<std::size_t>(unit)];
      },
      Array::abstract({2, 32}, DType::i32), Array::abstract({2, 32}, DType::i32));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 0, 3, 0, 2, 1, 0}));
}

// ---------------------------------------------------------------------------------------------------------
// Errors

TEST(TransformerErrors, BadConfigsAndRealArraysAreValueErrors) {
  try {
    Transformer({.layers = 2, .hidden = 100, .heads = 12, .seq_len = 8, .vocab = 10});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "transformer: 12 heads do not divide the hidden size 100");
  }
  EXPECT_THROW(Transformer({.layers = 0, .hidden = 8, .heads = 2, .seq_len = 8, .vocab = 10}), ValueError);

  const Transformer model(kSmall);
  const Array tokens = Array::abstract({2, 32}, DType::i32);
  try {
    model.value_and_grad(model.init_abstract(), Array::zeros({2, 32}, DType::i32), tokens);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "transformer tokens: the transformer is a cost model and runs on abstract arrays only, "
                 "got tokens with values");
  }
  try {
    model.value_and_grad(model.init_abstract(), Array::abstract({2, 31}, DType::i32), tokens);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "transformer tokens: expected int32 of shape (batch, 32), got int32(2, 31)");
  }
  try {
    model.value_and_grad(Tree::list({}), tokens, tokens);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "transformer params: expected a list of 4 units (embedding, 2 blocks, head), got "
                 "PyTreeDef([])");
  }
  const Tree real_block =
      model.init_abstract()[1].map([](const Array& leaf) { return Array::zeros(leaf.shape()); });
  try {
    model.block_forward(real_block, Array::abstract({32, 64}));
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "transformer block: the transformer is a cost model and runs on abstract arrays only "
                 "(init_abstract()), got parameters with values");
  }
}

}  // namespace
}  // namespace spmdsim::models
