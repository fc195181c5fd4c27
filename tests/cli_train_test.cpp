// `spmdsim train` as a user runs it: the built program (SPMDSIM_CLI) on small runs. Its table against a
// golden file, its JSON and CSV against its table, the loss that data parallelism must not change, and each
// bad input's exit status and message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace spmdsim {
namespace {

namespace fs = std::filesystem;
using testing::BadInput;
using testing::expect_matches_golden;
using testing::expect_plot_files;
using testing::lines_of;
using testing::normalised;
using testing::plotting_unavailable;
using testing::read_file;
using testing::scratch_dir;
using testing::table_rows;

// The table with each row's last figure, the loss, cut to five decimals: the MLP's float32 loss of a real run
// differs in its sixth decimal from one CPU to another (glibc picks its expf and logf by the CPU's features).
std::string loss_to_five_decimals(const std::string& table) {
  return std::regex_replace(table, std::regex(R"(( [0-9]+\.[0-9]{5})[0-9]\n)"), "$1\n");
}

// `spmdsim train <args>`.
testing::CliRun run_train(const std::string& args, const fs::path& dir) {
  return testing::run_cli(SPMDSIM_CLI, "train", args, dir);
}

// The golden run: dp with Adam on 1, 2 and 4 A100s on a switch (the defaults), under the preset's CM02 model.
constexpr const char* kGoldenRun = "--devices 1,2,4 --steps 2 --batch 64 --optimizer adam";

TEST(Train, TableMatchesGoldenFile) {
  const auto run = run_train(kGoldenRun, scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  expect_matches_golden(loss_to_five_decimals(normalised(run.out)), "train_dp_1_2_4_devices.txt");
}

// The same run with dp-overlap and buckets of 0.1 MiB (the MLP's gradients make three): part of the
// communication is hidden behind the backward pass.
TEST(Train, DpOverlapTableMatchesGoldenFile) {
  const auto run =
      run_train(fmt::format("{} --strategy dp-overlap --bucket-mb 0.1", kGoldenRun), scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  expect_matches_golden(loss_to_five_decimals(normalised(run.out)), "train_dp_overlap_1_2_4_devices.txt");
}

// A transformer trains abstract (implied): the header names the model, its parameter count and says so.
TEST(Train, TransformerTableMatchesGoldenFile) {
  const auto run = run_train("--model gpt2_small --devices 1,2 --batch 2 --steps 1", scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  expect_matches_golden(normalised(run.out), "train_gpt2_small_1_2_devices.txt");
}

// The rows of a run written with --json.
nlohmann::json run_json(const std::string& args) {
  return testing::run_cli_json(SPMDSIM_CLI, "train", args);
}

// Data parallelism must not change the mathematics: on the same global batch, 4 devices averaging their
// shards' gradients with pmean train the same model as 1 device on the whole batch. Only the order of the
// gradient sums differs (a few float32 ulps per step), hence rtol 1e-5, as tests/strategies_test.cpp uses.
TEST(Train, DataParallelLossIsTheSameOnOneAndFourDevices) {
  for (const char* strategy : {"dp", "dp-overlap --bucket-mb 0.1"})
    for (const char* optimizer : {"sgd", "adam"}) {
      const auto j = run_json(fmt::format("--devices 1,4 --steps 3 --batch 32 --strategy {} --optimizer {}",
                                          strategy, optimizer));
      ASSERT_EQ(j["rows"].size(), 2u);
      const double one = j["rows"][0]["last_loss"].get<double>();
      const double four = j["rows"][1]["last_loss"].get<double>();
      EXPECT_NEAR(four, one, 1e-5 * std::abs(one)) << strategy << ", " << optimizer;
    }
}

TEST(Train, JsonAndCsvAgreeWithTable) {
  const auto dir = scratch_dir();
  const auto json_path = dir / "run.json";
  const auto csv_path = dir / "run.csv";
  const auto run = run_train(
      fmt::format("{} --json '{}' --csv '{}'", kGoldenRun, json_path.string(), csv_path.string()), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_TRUE(j["bucket_bytes"].is_null());  // dp
  EXPECT_EQ(j["command"], "spmdsim train");
  const auto table = table_rows(run.out);
  const auto csv = lines_of(read_file(csv_path));
  ASSERT_EQ(table.size(), 3u);
  ASSERT_EQ(j["rows"].size(), 3u);
  ASSERT_EQ(csv.size(), 4u);  // the header, then a line per row
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(table[i][0], fmt::format("{}", row["devices"].get<int>()));
    EXPECT_EQ(table[i][2], fmt::format("{:.1f}", row["samples_per_s"].get<double>()));
    EXPECT_EQ(table[i][3], "n/a");  // tokens/s: the MLP has no tokens
    EXPECT_EQ(table[i][4], fmt::format("{:.3f}", row["mfu"].get<double>()));
    EXPECT_EQ(table[i][7], fmt::format("{:.2f}", row["communication_us"].get<double>()));
    EXPECT_EQ(table[i][8], fmt::format("{:.2f}", row["hidden_communication_us"].get<double>()));
    EXPECT_EQ(table[i][11], fmt::format("{:.3f}", row["efficiency"].get<double>()));
    EXPECT_TRUE(csv[i + 1].starts_with(
        fmt::format("{},{},", row["devices"].get<int>(), row["global_batch"].get<int>())));
  }
  EXPECT_DOUBLE_EQ(j["rows"][0]["efficiency"].get<double>(), 1.0);
}

// GPT-2 small at 64 x 1,024 tokens per 80 GB A100, mixed bf16 Adam (the everyday GPT-2 124M configuration)
// fits with fused attention; the materialised attention holds more. tokens/s is samples/s x s, and MFU is
// PaLM's 6N + 12 L h s per token against the A100's bf16 tensor peak.
TEST(Train, Gpt2SmallAt64SequencesPerA100FitsWithFusedAttention) {
  const std::string run =
      "--model gpt2_small --preset dgx_a100 --devices 8 --batch 512 --precision mixed_bf16 --optimizer adam "
      "--steps 1";
  const auto fused = run_json(run).at("rows").at(0);
  const auto naive = run_json(run + " --attention naive").at("rows").at(0);
  EXPECT_LT(fused["peak_memory_bytes"].get<double>(), 80.0 * (1ull << 30));
  EXPECT_GT(naive["peak_memory_bytes"].get<double>(), 2 * fused["peak_memory_bytes"].get<double>());
  const double samples = fused["samples_per_s"].get<double>();
  EXPECT_NEAR(fused["tokens_per_s"].get<double>(), samples * 1024, 1e-6 * samples * 1024);
  const double flops_per_token = 6 * 124'439'808.0 + 12 * 12 * 768 * 1024.0;
  EXPECT_NEAR(fused["mfu"].get<double>(), samples * 1024 * flops_per_token / (8 * 312e12), 1e-9);
}

// --dropout off trains GPT-2 without its masks: less memory and a shorter step, the same model otherwise.
TEST(Train, DropoutOffTrainsWithoutMasks) {
  const std::string run = "--model gpt2_small --devices 1 --batch 2 --precision mixed_bf16 --steps 1";
  const auto on = run_json(run);
  const auto off = run_json(run + " --dropout off");
  EXPECT_TRUE(on.at("model").at("dropout").get<bool>());
  EXPECT_FALSE(off.at("model").at("dropout").get<bool>());
  EXPECT_LT(off["rows"][0]["peak_memory_bytes"].get<double>(),
            on["rows"][0]["peak_memory_bytes"].get<double>());
  EXPECT_LT(off["rows"][0]["step_time_us"].get<double>(), on["rows"][0]["step_time_us"].get<double>());
}

// Every TPU preset trains (float32 matmuls as bf16 MXU passes, elementwise float32 on the VPU).
TEST(Train, TpuPresetsTrainInEitherPrecision) {
  for (const char* preset : {"tpu_v4", "tpu_v5e", "tpu_v5p"})
    for (const char* precision : {"fp32", "mixed_bf16"}) {
      const auto rows = run_json(fmt::format("--model gpt2_small --preset {} --devices 2 --batch 2 --steps 1 "
                                             "--precision {}",
                                             preset, precision))
                            .at("rows");
      ASSERT_EQ(rows.size(), 1u) << preset;
      EXPECT_GT(rows[0]["mfu"].get<double>(), 0) << preset << " " << precision;
    }
}

// The spans of one device in a trace (pid = device), by category, and its memory counter events.
struct TracedDevice {
  std::map<std::string, std::vector<std::string>> spans;  // category -> span names in order
  int memory_counters = 0;
};

std::map<int, TracedDevice> traced_devices(const fs::path& trace) {
  std::map<int, TracedDevice> devices;
  const auto parsed = nlohmann::json::parse(read_file(trace));
  for (const auto& event : parsed.at("traceEvents")) {
    const int pid = event.at("pid").get<int>();
    if (event.at("ph") == "X")
      devices[pid].spans[event.at("cat").get<std::string>()].push_back(event.at("name").get<std::string>());
    if (event.at("ph") == "C") ++devices[pid].memory_counters;
  }
  return devices;
}

// --trace: the largest count's run, per device: one pmean for the gradients (the MLP's six leaves, all
// float32, reduced as one call) and one for the loss in each step, its compute and each step's inputs from
// the host; no device->host span, the loss being read after the run.
TEST(Train, TraceHoldsTheLargestRunsSpansAndMemory) {
  const auto dir = scratch_dir();
  const auto trace = dir / "trace.json";
  const auto run =
      run_train(fmt::format("--devices 1,2 --steps 2 --batch 8 --trace '{}'", trace.string()), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("# trace of the 2-device run: " + trace.string()), std::string::npos) << run.out;
  const auto devices = traced_devices(trace);
  ASSERT_EQ(devices.size(), 2u);
  for (const auto& [pid, device] : devices) {
    EXPECT_EQ(device.spans.at("communication"), std::vector<std::string>(2 * 2, "pmean")) << "device " << pid;
    EXPECT_FALSE(device.spans.at("compute").empty());
    EXPECT_EQ(device.spans.at("transfer"), std::vector<std::string>(2, "host->device"))
        << "each step's batch, the first step's with the params and state; device " << pid;
    EXPECT_GT(device.memory_counters, 0);
  }
}

// --read-loss: one device->host transfer of the loss per step. The loss is replicated, and the host reads a
// replicated value from the first device only, as JAX does.
TEST(Train, ReadLossMovesTheLossToTheHostEveryStep) {
  const auto dir = scratch_dir();
  const auto trace = dir / "trace.json";
  const auto run =
      run_train(fmt::format("--devices 2 --steps 3 --batch 8 --read-loss --trace '{}'", trace.string()), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("3 steps, the loss read back after each;"), std::string::npos) << run.out;
  const auto devices = traced_devices(trace);
  const auto reads = [&](int pid) {
    const auto& transfers = devices.at(pid).spans.at("transfer");
    return std::count(transfers.begin(), transfers.end(), "device->host");
  };
  EXPECT_EQ(reads(0), 3);
  EXPECT_EQ(reads(1), 0);
}

// --fused-optimizer: the same losses (the update's values are the unfused ones bit for bit) in less compute
// (one launch per parameter, no intermediates read and written).
TEST(Train, FusedOptimizerKeepsTheLossAndTakesLessCompute) {
  const std::string run = "--devices 2 --steps 2 --batch 8 --optimizer adam";
  const auto unfused = run_json(run).at("rows");
  const auto fused = run_json(run + " --fused-optimizer").at("rows");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].at("last_loss").get<double>(), unfused[0].at("last_loss").get<double>());
  EXPECT_LT(fused[0].at("compute_us").get<double>(), unfused[0].at("compute_us").get<double>());
}

// --donate-state on reaches the step: the same losses (the update's values do not depend on where they are
// written), and a lower peak, as the old params and Adam's moments are released leaf by leaf while the new
// ones are made instead of being held beside them.
TEST(Train, DonatedStateKeepsTheLossAndLowersThePeak) {
  const std::string run = "--devices 2 --steps 2 --batch 8 --optimizer adam";
  const auto kept = run_json(run);
  const auto donated = run_json(run + " --donate-state on");
  EXPECT_FALSE(kept.at("donate_state").get<bool>());
  EXPECT_TRUE(donated.at("donate_state").get<bool>());
  const auto& k = kept.at("rows").at(0);
  const auto& d = donated.at("rows").at(0);
  EXPECT_EQ(d.at("last_loss").get<double>(), k.at("last_loss").get<double>());
  EXPECT_LT(d.at("peak_memory_bytes").get<double>(), k.at("peak_memory_bytes").get<double>());
  const auto text = run_train(run + " --donate-state on", scratch_dir());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("micro-batches 1, state donated to the update, fusion on"), std::string::npos)
      << text.out;
}

// --prefetch 1: each batch travels while the step before it computes: the same loss, less exposed transfer,
// a shorter step, and one more batch on each device (32 samples of 784 float32 features and an int32 label).
TEST(Train, PrefetchHidesTheBatchTransferAndKeepsTheLoss) {
  const std::string run = "--devices 2 --steps 4 --batch 64";
  const auto plain = run_json(run);
  const auto prefetched = run_json(run + " --prefetch 1");
  EXPECT_EQ(plain.at("prefetch"), 0);
  EXPECT_EQ(prefetched.at("prefetch"), 1);
  const auto& p = plain.at("rows").at(0);
  const auto& q = prefetched.at("rows").at(0);
  EXPECT_EQ(q.at("last_loss").get<double>(), p.at("last_loss").get<double>());
  EXPECT_LT(q.at("transfer_us").get<double>(), p.at("transfer_us").get<double>());
  EXPECT_LT(q.at("step_time_us").get<double>(), p.at("step_time_us").get<double>());
  EXPECT_EQ(q.at("peak_memory_bytes").get<double>(),
            p.at("peak_memory_bytes").get<double>() + 32 * (784 * 4 + 4));
}

// --strategy zero3 with its knobs from the command line: each layer's all-gather prefetched behind the
// layer before it is hidden communication (FSDP's forward and backward prefetch, the default depth 1);
// --prefetch-depth 0 exposes every gather. The stream carries the same collectives either way, so what the
// default hides the program waits for without prefetching; the values are the same.
TEST(Train, Zero3PrefetchHidesGathersAndDepthZeroExposesThem) {
  const std::string run = "--strategy zero3 --devices 4 --steps 1";
  const auto prefetched = run_json(run).at("rows").at(0);
  const auto unprefetched = run_json(run + " --prefetch-depth 0").at("rows").at(0);
  const double hidden = prefetched.at("hidden_communication_us").get<double>();
  const double exposed = prefetched.at("communication_us").get<double>();
  EXPECT_GT(hidden, 0);
  EXPECT_NEAR(unprefetched.at("hidden_communication_us").get<double>(), 0, 1e-9);
  EXPECT_NEAR(unprefetched.at("communication_us").get<double>(), exposed + hidden, 1e-9 * (exposed + hidden));
  EXPECT_GT(unprefetched.at("step_time_us").get<double>(), prefetched.at("step_time_us").get<double>());
  EXPECT_EQ(unprefetched.at("last_loss").get<double>(), prefetched.at("last_loss").get<double>());
}

// With two micro-batches ZeRO-2 reduce-scatters the gradients of each; --no-sync on only the last one's, the
// sum of both, kept whole until then: less communication, a higher peak, the same loss.
TEST(Train, NoSyncReducesOnceAndKeepsWholeGradients) {
  const std::string run = "--strategy zero2 --devices 4 --batch 64 --micro-batches 2 --steps 1";
  const auto every = run_json(run).at("rows").at(0);
  const auto once = run_json(run + " --no-sync on").at("rows").at(0);
  EXPECT_LT(once.at("communication_us").get<double>(), every.at("communication_us").get<double>());
  EXPECT_GT(once.at("peak_memory_bytes").get<double>(), every.at("peak_memory_bytes").get<double>());
  EXPECT_EQ(once.at("last_loss").get<double>(), every.at("last_loss").get<double>());
  const auto text = run_train(run + " --no-sync on", scratch_dir());
  EXPECT_NE(text.out.find("overlap_comm off, no_sync"), std::string::npos) << text.out;
}

// Mixed precision reduces the bf16 gradients in bf16 by default; --reduce-dtype f32 casts them first and moves
// twice the bytes, which the header states.
TEST(Train, ReduceDtypeF32ReducesFloat32Gradients) {
  const std::string run = "--devices 4 --batch 64 --steps 1 --precision mixed_bf16";
  const auto bf16 = run_json(run);
  const auto f32 = run_json(run + " --reduce-dtype f32");
  EXPECT_EQ(bf16.at("reduce_dtype"), "bfloat16");
  EXPECT_EQ(f32.at("reduce_dtype"), "float32");
  EXPECT_GT(f32.at("rows").at(0).at("communication_us").get<double>(),
            bf16.at("rows").at(0).at("communication_us").get<double>());
  const auto text = run_train(run + " --reduce-dtype f32", scratch_dir());
  EXPECT_NE(text.out.find("mixed_bf16 (gradients reduced in float32)"), std::string::npos) << text.out;
}

// --param-shard-dtype f32 keeps zero3's param shards in float32, cast to bfloat16 for each gather (FSDP's
// layout): the same loss and the same gathers, of which the casts' compute hides more; the JSON and the
// header state it.
TEST(Train, ParamShardDtypeF32KeepsFloat32Shards) {
  const std::string run = "--strategy zero3 --devices 4 --batch 64 --steps 1 --precision mixed_bf16";
  const auto bf16 = run_json(run);
  const auto f32 = run_json(run + " --param-shard-dtype f32");
  EXPECT_EQ(bf16.at("param_shard_dtype"), "bfloat16");
  EXPECT_EQ(f32.at("param_shard_dtype"), "float32");
  const auto& b = bf16.at("rows").at(0);
  const auto& f = f32.at("rows").at(0);
  EXPECT_EQ(f.at("last_loss").get<double>(), b.at("last_loss").get<double>());
  const auto all_communication = [](const nlohmann::json& row) {
    return row.at("communication_us").get<double>() + row.at("hidden_communication_us").get<double>();
  };
  EXPECT_NEAR(all_communication(f), all_communication(b), 1e-9 * all_communication(b));
  EXPECT_GT(f.at("compute_us").get<double>(), b.at("compute_us").get<double>());
  const auto text = run_train(run + " --param-shard-dtype f32", scratch_dir());
  EXPECT_NE(text.out.find("mixed_bf16 (float32 param shards)"), std::string::npos) << text.out;
}

// --aggregate books each ring phase of the abstract gradient all-reduce as one transfer each way: under the
// presets' alpha-beta model the step takes the same simulated time as message by message.
TEST(Train, AggregatedRingPhasesGiveTheSameStepTime) {
  const std::string args = "--model gpt2_small --devices 4 --batch 4 --steps 1 --precision mixed_bf16";
  const auto per_message = run_train(args, scratch_dir());
  const auto aggregated = run_train(args + " --aggregate", scratch_dir());
  ASSERT_EQ(per_message.status, 0) << per_message.err;
  ASSERT_EQ(aggregated.status, 0) << aggregated.err;
  const auto expected = table_rows(per_message.out);
  const auto actual = table_rows(aggregated.out);
  ASSERT_EQ(expected.size(), 1u);
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_EQ(actual[0][5], expected[0][5]);    // step(us)
  EXPECT_EQ(actual[0][12], expected[0][12]);  // peak(MiB)
}

// --trace-once off runs the abstract step on every device instead of replaying its program: the same row.
TEST(Train, TraceOnceOffGivesTheSameRow) {
  const std::string args =
      "--model gpt2_small --preset dgx_h100 --devices 8 --batch 8 --steps 1 --precision mixed_bf16 "
      "--aggregate";
  const auto replayed = run_train(args, scratch_dir());
  const auto per_device = run_train(args + " --trace-once off", scratch_dir());
  ASSERT_EQ(replayed.status, 0) << replayed.err;
  ASSERT_EQ(per_device.status, 0) << per_device.err;
  ASSERT_EQ(table_rows(replayed.out).size(), 1u);
  EXPECT_EQ(table_rows(per_device.out), table_rows(replayed.out));
}

// nccl, the default on a node of H200s: the gradient all-reduce of gpt2_small (bf16, 249 MB) runs as NVLS,
// whose port traffic (p + 1)/p of the vector each way beats the ring's 2 (p - 1)/p, so the step's
// communication is shorter than with --algorithm ring; the JSON names the algorithm, the compute is the same.
TEST(Train, NcclAlgorithmRunsTheAllReduceAsNcclDoes) {
  const std::string args =
      "--model gpt2_small --preset hgx_h200 --devices 8 --batch 8 --steps 1 --precision mixed_bf16";
  const auto ring = run_json(args + " --algorithm ring");
  const auto nccl = run_json(args);
  EXPECT_EQ(ring.at("collective_algorithm"), "ring");
  EXPECT_EQ(nccl.at("collective_algorithm"), "nccl");
  const auto& r = ring.at("rows").at(0);
  const auto& n = nccl.at("rows").at(0);
  EXPECT_EQ(n.at("compute_us"), r.at("compute_us"));
  EXPECT_LT(n.at("communication_us").get<double>(), r.at("communication_us").get<double>());
}

TEST(Train, PrefetchTableMatchesGoldenFile) {
  const auto run =
      run_train("--devices 1,2 --steps 3 --batch 64 --optimizer adam --prefetch 1", scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  expect_matches_golden(loss_to_five_decimals(normalised(run.out)), "train_dp_prefetch_1_2_devices.txt");
}

TEST(Train, ConfigFileGivesThePrefetch) {
  const auto dir = scratch_dir();
  const auto config = dir / "train.ini";
  const auto json = dir / "run.json";
  std::ofstream(config) << "devices = 2\nsteps = 2\nbatch = 8\nprefetch = 2\n";
  const auto run = run_train(fmt::format("--config '{}' --json '{}'", config.string(), json.string()), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("batches prefetched 2 ahead"), std::string::npos) << run.out;
  EXPECT_EQ(nlohmann::json::parse(read_file(json)).at("prefetch"), 2);
}

// Weak scaling keeps the per-device batch: the global batch grows with the devices.
TEST(Train, WeakScalingGrowsTheGlobalBatch) {
  const auto j = run_json("--devices 1,2,4 --steps 1 --batch 16 --scaling weak --abstract");
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["global_batch"], 16);
  EXPECT_EQ(j["rows"][2]["global_batch"], 64);
  EXPECT_TRUE(j["rows"][2]["last_loss"].is_null());
}

TEST(Train, ConfigFileGivesTheCommandLinesOutput) {
  const auto dir = scratch_dir();
  const auto config = dir / "train.ini";
  std::ofstream(config) << "# the golden run\ndevices = 1,2,4\nsteps = 2\nbatch = 64\noptimizer = adam\n";
  const auto from_file = run_train(fmt::format("--config '{}'", config.string()), dir);
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  const auto from_command_line = run_train(kGoldenRun, dir);
  EXPECT_EQ(normalised(from_file.out), normalised(from_command_line.out));
}

std::vector<BadInput> bad_inputs() {
  return {
      {"UnknownStrategy", "--strategy zero4",
       "--strategy: unknown training strategy 'zero4' (valid: dp, dp-overlap, zero1, zero2, zero3)"},
      {"ZeroBucket", "--strategy dp-overlap --bucket-mb 0",
       "--bucket-mb must be a positive number of MiB (got '0')"},
      {"NegativeBucket", "--strategy dp-overlap --bucket-mb=-1",
       "--bucket-mb must be a positive number of MiB (got '-1')"},
      {"BucketNotANumber", "--strategy dp-overlap --bucket-mb 25MB",
       "--bucket-mb must be a positive number of MiB (got '25MB')"},
      {"BucketWithoutOverlap", "--strategy dp --bucket-mb 25",
       "--bucket-mb applies to --strategy dp-overlap only"},
      {"ZeroReduceBucket", "--strategy zero2 --reduce-bucket-size 0",
       "--reduce-bucket-size must be a whole number from 1 to 1000000000000000 (got '0')"},
      {"ReduceBucketForDp", "--strategy dp --reduce-bucket-size 1000",
       "--reduce-bucket-size applies to --strategy zero2 or zero3 only"},
      {"OverlapCommNotOnOrOff", "--strategy zero2 --overlap-comm yes",
       "--overlap-comm must be on or off (got 'yes')"},
      {"DonateStateNotOnOrOff", "--donate-state 1", "unknown --donate-state '1'; valid: on, off"},
      {"TraceOnceNotOnOrOff", "--trace-once yes", "unknown --trace-once 'yes'; valid: on, off"},
      {"NegativePrefetchDepth", "--strategy zero3 --prefetch-depth=-1",
       "--prefetch-depth must be a whole number from 0 to 1024 (got '-1')"},
      {"PrefetchDepthForZero2", "--strategy zero2 --prefetch-depth 2",
       "--prefetch-depth applies to --strategy zero3 only"},
      {"PrefetchBucketNotANumber", "--strategy zero3 --prefetch-bucket-size 5e7",
       "--prefetch-bucket-size must be a whole number from 0 to 1000000000000000 (got '5e7')"},
      {"NegativeWrapUnits", "--strategy zero3 --wrap-units=-1",
       "--wrap-units must be a whole number from 0 to 999999999 (got '-1')"},
      {"ZeroMaxLiveParameters", "--strategy zero3 --max-live-parameters 0",
       "--max-live-parameters must be a whole number from 1 to 1000000000000000 (got '0')"},
      {"ReduceDtypeUnderFp32", "--reduce-dtype f32", "--reduce-dtype applies to --precision mixed_bf16 only"},
      {"ParamShardDtypeUnderFp32", "--strategy zero3 --param-shard-dtype f32",
       "--param-shard-dtype applies to --precision mixed_bf16 only"},
      {"ParamShardDtypeForZero2", "--strategy zero2 --precision mixed_bf16 --param-shard-dtype f32",
       "--param-shard-dtype applies to --strategy zero3 only"},
      {"UnknownParamShardDtype", "--strategy zero3 --precision mixed_bf16 --param-shard-dtype fp16",
       "unknown --param-shard-dtype 'fp16'; valid: bf16, f32"},
      {"UnknownReduceDtype", "--precision mixed_bf16 --reduce-dtype fp16",
       "unknown --reduce-dtype 'fp16'; valid: bf16, f32"},
      {"NoSyncNotOnOrOff", "--strategy zero3 --no-sync yes", "unknown --no-sync 'yes'; valid: on, off"},
      {"NoSyncForZero1", "--strategy zero1 --no-sync on",
       "--no-sync applies to --strategy zero2 or zero3 only"},
      {"BatchNotDivisible", "--devices 1,3 --batch 64",
       "--batch 64 is not divisible by 3 devices: each device gets an equal share of the global batch"},
      {"ZeroDevices", "--devices 0", "--devices: '0' is not a device count from 1 to 131072"},
      {"UnknownOptimizer", "--optimizer lamb", "unknown --optimizer 'lamb'; valid: sgd, momentum, adam"},
      {"MicroBatchesNotDividing", "--devices 4 --batch 64 --micro-batches 3",
       "the per-device batch 16 at 4 devices is not divisible by --micro-batches 3"},
      {"UnknownScaling", "--scaling linear", "unknown --scaling 'linear'; valid: strong, weak"},
      {"ZeroSteps", "--steps 0", "--steps must be a whole number from 1 to 999999999 (got '0')"},
      // Boost.Program_options would replace its own token in this value forever (tests/fuzz found it).
      {"LearningRateHoldingBoostsToken", "--learning-rate '%value%'",
       "the argument ('?value?') for option '--learning-rate' is invalid"},
      {"NegativePrefetch", "--prefetch=-1",
       "--prefetch must be a whole number from 0 to 999999999 (got '-1')"},
      {"FractionalPrefetch", "--prefetch 1.5",
       "--prefetch must be a whole number from 0 to 999999999 (got '1.5')"},
      {"UnknownAttention", "--model gpt2_small --attention flash",
       "unknown --attention 'flash'; valid: fused, fused-fa1, fused-triton, naive"},
      {"TritonAttentionWithoutItsRate",
       "--model gpt2_small --preset dgx_h100 --devices 1 --batch 1 --steps 1 "
       "--attention fused-triton",
       "--attention fused-triton: the NVIDIA H100 SXM5 80GB devices have no published rate of the "
       "FlashAttention Triton kernel; presets with one: a100, a100_40gb (and the nodes of them); use "
       "--attention fused"},
      {"FlashAttention1WithoutItsRate",
       "--model gpt2_small --preset dgx_b200 --devices 1 --batch 1 --steps 1 "
       "--attention fused-fa1",
       "--attention fused-fa1: the NVIDIA B200 (HGX/DGX, 1000 W) devices have no published rate of the "
       "FlashAttention (1.x) kernel; presets with one: a100, a100_40gb, h100, h200 (and the nodes of them); "
       "use --attention fused"},
      {"AttentionWithoutTransformer", "--attention naive",
       "--attention applies to transformers; the MLP has no attention"},
      {"UnknownLoss", "--model gpt2_small --loss chunked",
       "unknown --loss 'chunked'; valid: fused, unfused, unfused_fp32"},
      {"LossWithoutTransformer", "--loss unfused",
       "--loss applies to transformers; the MLP computes its loss as it always does"},
      {"UnknownDropout", "--model gpt2_small --dropout 0.1", "unknown --dropout '0.1'; valid: on, off"},
      {"DropoutWithoutTransformer", "--dropout off",
       "--dropout applies to transformers; the MLP has no dropout"},
      {"UnknownFusion", "--fusion maybe", "unknown --fusion 'maybe'; valid: on, off"},
      {"AlgorithmNotForEveryKind", "--algorithm nvls",
       "--algorithm 'nvls' is not registered for all_reduce, all_gather and reduce_scatter; valid: ring, "
       "direct, torus, nccl_ring, nccl, auto"},
      {"UnknownModel", "--model bert",
       "unknown --model 'bert'; valid: mlp, gpt2_small, gpt_7b, gpt3_175b, custom"},
      {"CustomWithoutShape", "--model custom --hidden 64",
       "--model custom needs --layers, --hidden, --heads, --seq-len and --vocab"},
      {"RecomputeForTheMlp", "--recompute selective",
       "--recompute applies to transformers; the MLP keeps every activation"},
      {"TooManyDevices", "--preset dgx_h100 --devices 16",
       "--devices 16 is more than the 8 devices of --preset dgx_h100 (--nodes N joins N of them)"},
  };
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoWithMessage) {
  testing::expect_refused(SPMDSIM_CLI, "train", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Train, BadInputTest, ::testing::ValuesIn(bad_inputs()),
                         [](const auto& test) { return test.param.name; });

TEST(Train, BadConfigKeyNamesTheFile) {
  const auto dir = scratch_dir();
  const auto config = dir / "train.ini";
  std::ofstream(config) << "devices = 1,2\nwidth = 3\n";
  const auto run = run_train(fmt::format("--config '{}'", config.string()), dir);
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(lines_of(run.err).at(0).starts_with(
      fmt::format("spmdsim train: {}: unknown key 'width'; valid: ", config.string())))
      << run.err;
}

TEST(Train, PlotWritesPngAndSvg) {
  const auto dir = scratch_dir();
  const auto prefix = dir / "scaling";
  const auto run =
      run_train(fmt::format("--devices 1,2 --steps 1 --batch 16 --plot '{}'", prefix.string()), dir);
  if (plotting_unavailable(run)) GTEST_SKIP() << run.err;
  ASSERT_EQ(run.status, 0) << run.err;
  expect_plot_files(prefix);
  // matplotlib's SVG names each text in a comment: the panels, and the communication's two parts.
  const std::string svg = read_file(prefix.string() + ".svg");
  for (const char* text : {"<!-- step time -->", "<!-- communication -->", "<!-- exposed -->",
                           "<!-- hidden (during compute) -->"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
}

TEST(Jobs, TwoAtATimeGiveTheSameOutputAsOne) {
  testing::expect_same_output_with_two_jobs(SPMDSIM_CLI, "train",
                                            "--devices 1,2,4,8 --batch 64 --steps 2 --strategy dp-overlap");
}

}  // namespace
}  // namespace spmdsim
