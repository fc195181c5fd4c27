// Data-parallel training strategies on the MLP: k steps of each strategy on N devices give the parameters
// and losses of k steps on one device with the whole batch, every replica stays bit-identical, and the
// per-device model-state memory is the ZeRO paper's, for the MLP and for the transformer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "spmdsim/errors.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/models/sharding.hpp"
#include "spmdsim/models/transformer.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/residency.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Helpers

constexpr std::int64_t kGlobalBatch = 24;  // divisible by every N below times 3 micro-batches
constexpr int kSteps = 3;

Array random_normal(Shape shape, std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (auto& v : values) v = normal(gen);
  return Array::from_values(std::move(shape), values);
}

Array random_labels(std::int64_t n, std::int64_t classes, std::mt19937& gen) {
  std::uniform_int_distribution<std::int64_t> pick(0, classes - 1);
  std::vector<double> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(static_cast<double>(pick(gen)));
  return Array::from_values({n}, values, DType::i32);
}

Tree cast_tree(const Tree& tree, DType dtype) {
  return tree.map([dtype](const Array& leaf) { return leaf.dtype() == dtype ? leaf : astype(leaf, dtype); });
}

// Largest |a - b| over two trees of one structure, and whether every element is within atol + rtol |b|.
struct Comparison {
  double max_abs_error = 0;
  bool close = true;
};
Comparison compare(const Tree& a, const Tree& b, double rtol, double atol) {
  Comparison c;
  const auto la = a.leaves();
  const auto lb = b.leaves();
  EXPECT_EQ(a.treedef(), b.treedef());
  for (std::size_t i = 0; i < la.size() && i < lb.size(); ++i) {
    EXPECT_EQ(la[i].shape(), lb[i].shape());
    const auto va = la[i].to_doubles();
    const auto vb = lb[i].to_doubles();
    for (std::size_t j = 0; j < va.size() && j < vb.size(); ++j) {
      const double error = std::abs(va[j] - vb[j]);
      c.max_abs_error = std::max(c.max_abs_error, error);
      if (!(error <= atol + rtol * std::abs(vb[j]))) c.close = false;
    }
  }
  return c;
}

// Every device's copy of every replicated (out_axes None) leaf is bit-identical to device 0's. Returns the
// number of replicated leaves checked.
int expect_replicas_identical(const Tree& tree, int num_devices, const std::string& what) {
  int checked = 0;
  for (const Array& leaf : tree.leaves()) {
    const auto& residency = leaf.residency();
    if (!residency || residency->axis) continue;
    EXPECT_EQ(residency->shards.size(), static_cast<std::size_t>(num_devices));
    for (std::size_t d = 1; d < residency->shards.size(); ++d)
      EXPECT_TRUE(array_equal(residency->shards[d], residency->shards[0]))
          << what << ": device " << d << "'s replica differs from device 0's";
    ++checked;
  }
  return checked;
}

// ---------------------------------------------------------------------------------------------------------
// Correctness: N devices against one device with the whole batch

struct StrategyCase {
  std::string name;
  Strategy strategy;
  Optimizer::Kind optimizer;
  int micro_batches = 1;
  Precision precision = Precision::fp32;
  DType reduce_dtype = DType::bf16;
  Bytes bucket_bytes = kDefaultBucketBytes;  // dp-overlap
  ZeroOptions zero = {};                     // zero2, zero3
  DType param_shard_dtype = DType::bf16;     // mixed zero3
};

Optimizer make_optimizer(Optimizer::Kind kind) {
  switch (kind) {
    case Optimizer::Kind::sgd:
      return Optimizer::sgd(0.1);
    case Optimizer::Kind::momentum:
      return Optimizer::momentum(0.1, 0.9);
    default:
      return Optimizer::adam(1e-2);
  }
}

const std::vector<StrategyCase> kStrategyCases = {
    {"dp_sgd", Strategy::dp, Optimizer::Kind::sgd},
    {"dp_momentum", Strategy::dp, Optimizer::Kind::momentum},
    {"dp_adam", Strategy::dp, Optimizer::Kind::adam},
    {"accumulate3_momentum", Strategy::dp, Optimizer::Kind::momentum, 3},
    {"accumulate3_adam", Strategy::dp, Optimizer::Kind::adam, 3},
    {"zero1_adam", Strategy::zero1, Optimizer::Kind::adam},
    {"zero2_adam", Strategy::zero2, Optimizer::Kind::adam},
    {"zero3_adam", Strategy::zero3, Optimizer::Kind::adam},
    {"zero2_sgd", Strategy::zero2, Optimizer::Kind::sgd},
    {"zero3_momentum_accumulate3", Strategy::zero3, Optimizer::Kind::momentum, 3},
    {"mixed_momentum", Strategy::dp, Optimizer::Kind::momentum, 1, Precision::mixed_bf16},
    {"mixed_reduce_f32_momentum", Strategy::dp, Optimizer::Kind::momentum, 1, Precision::mixed_bf16,
     DType::f32},
    {"mixed_adam", Strategy::dp, Optimizer::Kind::adam, 1, Precision::mixed_bf16},
    {"mixed_zero1_momentum", Strategy::zero1, Optimizer::Kind::momentum, 1, Precision::mixed_bf16},
    {"mixed_zero2_momentum", Strategy::zero2, Optimizer::Kind::momentum, 1, Precision::mixed_bf16},
    {"mixed_zero3_momentum", Strategy::zero3, Optimizer::Kind::momentum, 1, Precision::mixed_bf16},
    {"mixed_zero3_adam", Strategy::zero3, Optimizer::Kind::adam, 1, Precision::mixed_bf16},
    // dp-overlap: one bucket, then buckets of 600 bytes (float32: {w2, b2, w1} 656, {b1, w0} 2080, {b0} 64
    // bytes) and 300 bytes (bfloat16: {w2, b2, w1} 328, {b1, w0} 1040, {b0} 32).
    {"dp_overlap_sgd", Strategy::dp_overlap, Optimizer::Kind::sgd},
    {"dp_overlap_buckets_adam", Strategy::dp_overlap, Optimizer::Kind::adam, 1, Precision::fp32, DType::bf16,
     600},
    {"dp_overlap_buckets_accumulate3_momentum", Strategy::dp_overlap, Optimizer::Kind::momentum, 3,
     Precision::fp32, DType::bf16, 600},
    {"mixed_dp_overlap_buckets_momentum", Strategy::dp_overlap, Optimizer::Kind::momentum, 1,
     Precision::mixed_bf16, DType::bf16, 300},
    {"mixed_dp_overlap_buckets_reduce_f32_momentum", Strategy::dp_overlap, Optimizer::Kind::momentum, 1,
     Precision::mixed_bf16, DType::f32, 600},
    // ZeRO-2/3 with buckets of 150 elements ({w2, b2, w1}, {b1, w0}, {b0}), reduce-scattered on the stream or
    // by the program, and ZeRO-3 without prefetching.
    {"zero2_buckets_overlap_adam",
     Strategy::zero2,
     Optimizer::Kind::adam,
     1,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.reduce_bucket_elements = 150, .overlap_comm = true}},
    {"zero3_buckets_sync_accumulate3_momentum",
     Strategy::zero3,
     Optimizer::Kind::momentum,
     3,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.reduce_bucket_elements = 150, .overlap_comm = false}},
    {"mixed_zero3_buckets_no_prefetch_adam",
     Strategy::zero3,
     Optimizer::Kind::adam,
     1,
     Precision::mixed_bf16,
     DType::bf16,
     kDefaultBucketBytes,
     {.reduce_bucket_elements = 150, .prefetch_units = 0}},
    {"zero3_wrap2_momentum_accumulate3",
     Strategy::zero3,
     Optimizer::Kind::momentum,
     3,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.wrap_units = 2}},
    {"zero3_whole_model_adam",
     Strategy::zero3,
     Optimizer::Kind::adam,
     1,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.prefetch_units = 2, .wrap_units = 0}},
    // Accumulation under FSDP's no_sync (one reduction of the summed gradients) and, in bfloat16, every
    // micro-batch reduce-scattered and its shards summed.
    {"zero2_no_sync_accumulate3_adam",
     Strategy::zero2,
     Optimizer::Kind::adam,
     3,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.reduce_bucket_elements = 150, .no_sync = true}},
    {"zero3_no_sync_accumulate3_momentum",
     Strategy::zero3,
     Optimizer::Kind::momentum,
     3,
     Precision::fp32,
     DType::bf16,
     kDefaultBucketBytes,
     {.no_sync = true}},
    {"mixed_zero2_accumulate3_momentum", Strategy::zero2, Optimizer::Kind::momentum, 3,
     Precision::mixed_bf16},
    // FSDP's mixed precision: float32 param shards, cast for each gather, float32 gradient shards.
    {"mixed_zero3_fp32_shards_adam",
     Strategy::zero3,
     Optimizer::Kind::adam,
     1,
     Precision::mixed_bf16,
     DType::bf16,
     kDefaultBucketBytes,
     {},
     DType::f32},
    {"mixed_zero3_fp32_shards_reduce_f32_accumulate3_momentum",
     Strategy::zero3,
     Optimizer::Kind::momentum,
     3,
     Precision::mixed_bf16,
     DType::f32,
     kDefaultBucketBytes,
     {.reduce_bucket_elements = 150},
     DType::f32},
};

// What one step on one device with the whole batch gives: the reference, computed on the host with the
// same model and optimizer code (under mixed precision: bf16 params and gradients, fp32 master weights).
struct Reference {
  std::vector<double> losses;      // before each step
  std::vector<Tree> params_after;  // fp32 (the master weights under mixed precision), after each step
};

Reference reference_run(const Mlp& mlp, const Optimizer& optimizer, bool mixed, Tree params, const Array& x,
                        const Array& y) {
  Reference ref;
  Tree state = optimizer.init(params);
  for (int step = 0; step < kSteps; ++step) {
    const Tree compute = mixed ? cast_tree(params, DType::bf16) : params;
    LossAndGrads lg = mlp.value_and_grad(compute, x, y);
    ref.losses.push_back(lg.loss.item(0));
    OptimizerStep next = optimizer.update(cast_tree(lg.grads, DType::f32), state, params);
    params = next.params;
    state = next.state;
    ref.params_after.push_back(params);
  }
  return ref;
}

// The tolerance of a strategy on N > 1 devices (on one device every strategy without micro-batches is
// bit-identical to the reference: the same ops in the same order, and a reduction over one device is exact).
//
// float32: the runs differ only in the order of the gradient sums (per-device partial sums added by the
// all-reduce or reduce-scatter, micro-batch partial sums added by accumulation), which moves a gradient
// element by a few ulps of the magnitude of its terms: about 1e-7 relative here (reductions of <= 24 terms).
// Losses are computed from parameters that differ by that much times the learning rate, and Adam's
// m / (sqrt(v) + eps) is scale-free, so such relative errors pass through it unamplified. rtol 1e-5 and atol
// 1e-6 leave a margin of about 100 over the worst error measured (~1e-8 on params, ~1e-7 on losses).
//
// mixed bf16: each device rounds its own partial gradients to bf16 (8 significant bits, u = 2^-9) and a bf16
// all-reduce rounds again at every hop, where the reference rounds the whole-batch gradient once. That moves
// a gradient element by up to ~N ulps of bf16, ~1e-2 relative, and a momentum-SGD parameter by lr times the
// accumulated gradient error: with lr 0.1, |g| <~ 0.5 and three steps, a few 1e-4. Losses, computed in bf16
// forward passes, differ by a few bf16 ulps of the loss (~1e-2 relative). Adam normalises each update to
// about lr, so a gradient element near zero whose bf16 sign differs moves by up to 2 lr per step: for Adam
// under mixed precision only |dp| <= 2 lr k is a bound.
struct Tolerance {
  double loss_rtol;
  double params_rtol;
  double params_atol;
};

Tolerance tolerance_for(const StrategyCase& c) {
  if (c.precision == Precision::fp32) return {1e-5, 1e-5, 1e-6};
  if (c.optimizer == Optimizer::Kind::adam) return {2e-2, 0, 2 * 1e-2 * kSteps};
  return {2e-2, 0, 2e-3};
}

class StrategyEquivalence : public ::testing::TestWithParam<std::tuple<StrategyCase, int>> {};

TEST_P(StrategyEquivalence, MatchesOneDeviceWithTheWholeBatchAndReplicasStayIdentical) {
  const auto& [c, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const Mlp mlp({32, 16, 8, 4}, Activation::tanh, Loss::softmax_cross_entropy);
  const Optimizer optimizer = make_optimizer(c.optimizer);
  const bool mixed = c.precision == Precision::mixed_bf16;
  std::mt19937 gen(42);
  const Tree params0 = mlp.init(0);
  const Array x = random_normal({kGlobalBatch, 32}, gen);
  const Array y = random_labels(kGlobalBatch, 4, gen);
  const Reference ref = reference_run(mlp, optimizer, mixed, params0, x, y);

  TrainStep step(mlp, optimizer, n,
                 {.strategy = c.strategy,
                  .micro_batches = c.micro_batches,
                  .precision = c.precision,
                  .reduce_dtype = c.reduce_dtype,
                  .param_shard_dtype = c.param_shard_dtype,
                  .bucket_bytes = c.bucket_bytes,
                  .zero = c.zero});
  TrainState state = step.init(params0);
  const bool exact = n == 1 && c.micro_batches == 1;
  const Tolerance tol = tolerance_for(c);
  for (int s = 0; s < kSteps; ++s) {
    StepResult result = step(sim, state, shard_batch(x, n), shard_batch(y, n));
    state = result.state;
    // Replicas: every replicated leaf (params and state for dp, params for ZeRO 1/2, Adam's count, the loss)
    // holds the same bits on every device.
    const int replicated = expect_replicas_identical(
        Tree::tuple({state.params, state.opt_state, result.loss}), n, c.name + " step " + std::to_string(s));
    EXPECT_GE(replicated, 1);
    const double loss = sim.device_get(result.loss).leaf().item(0);
    const Tree params = step.full_params(sim, state);
    const Comparison p = compare(params, ref.params_after[static_cast<std::size_t>(s)],
                                 exact ? 0 : tol.params_rtol, exact ? 0 : tol.params_atol);
    if (exact) {
      EXPECT_EQ(loss, ref.losses[static_cast<std::size_t>(s)]) << "step " << s;
    } else {
      EXPECT_NEAR(loss, ref.losses[static_cast<std::size_t>(s)], tol.loss_rtol * std::abs(ref.losses[s]))
          << "step " << s;
    }
    EXPECT_TRUE(p.close) << c.name << " on " << n << " devices, step " << s
                         << ": largest |params - reference| = " << p.max_abs_error;
    RecordProperty("max_param_error_step" + std::to_string(s), std::to_string(p.max_abs_error));
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, StrategyEquivalence,
                         ::testing::Combine(::testing::ValuesIn(kStrategyCases), ::testing::Values(1, 2, 4)),
                         [](const auto& test_info) {
                           return std::get<0>(test_info.param).name + "_p" +
                                  std::to_string(std::get<1>(test_info.param));
                         });

// ---------------------------------------------------------------------------------------------------------
// Memory: the ZeRO paper's model-state formulas, exactly

// [784, 256, 128, 16]: every leaf's size is a multiple of 8, so no shard is padded for N <= 8.
const Mlp kMemoryModel({784, 256, 128, 16}, Activation::relu, Loss::softmax_cross_entropy);

// Adam's step count: one int32 on every device, optimizer state the paper's formulas leave out.
constexpr double kCountBytes = 4;

class ModelStateMemory : public ::testing::TestWithParam<std::tuple<Strategy, int>> {};

const auto kEveryStrategyOnUpToEightDevices =
    ::testing::Combine(::testing::Values(Strategy::dp, Strategy::zero1, Strategy::zero2, Strategy::zero3),
                       ::testing::Values(1, 2, 4, 8));

std::string strategy_and_devices_name(const ::testing::TestParamInfo<std::tuple<Strategy, int>>& info) {
  return std::string(strategy_name(std::get<0>(info.param))) + "_p" + std::to_string(std::get<1>(info.param));
}

// Mixed-precision Adam (bf16 params and gradients, fp32 master weights, momentum and variance: K = 12) on
// psi parameters: each device's model state, tag by tag, just before the update of the last step, where every
// piece of it is live.
void expect_mixed_adam_model_states_of_the_zero_paper(const TrainStep& step, const Simulation& sim,
                                                      std::int64_t psi_count) {
  const Strategy strategy = step.options().strategy;
  const int n = step.num_devices();
  const double psi = static_cast<double>(psi_count);
  const double paper = zero_model_state_bytes(strategy, psi_count, n);
  const double expected_paper = strategy == Strategy::dp      ? 16 * psi
                                : strategy == Strategy::zero1 ? 4 * psi + 12 * psi / n
                                : strategy == Strategy::zero2 ? 2 * psi + 14 * psi / n
                                                              : 16 * psi / n;
  EXPECT_EQ(paper, expected_paper);
  const bool params_sharded = strategy == Strategy::zero3;
  const bool grads_sharded = strategy == Strategy::zero2 || strategy == Strategy::zero3;
  const bool state_sharded = strategy != Strategy::dp;
  ASSERT_EQ(step.memory_before_update().size(), static_cast<std::size_t>(n));
  for (const MemoryByTag& memory : step.memory_before_update()) {
    EXPECT_EQ(model_states(memory), expected_paper + kCountBytes);
    EXPECT_EQ(memory[tags::parameters], 2 * psi / (params_sharded ? n : 1));
    EXPECT_EQ(memory[tags::gradients], 2 * psi / (grads_sharded ? n : 1));
    EXPECT_EQ(memory[tags::optimizer_state], 12 * psi / (state_sharded ? n : 1) + kCountBytes);
    EXPECT_EQ(memory[tags::activations], 0);  // released by the end of the backward pass
  }
  // The whole-call peak of each device holds at least the model state.
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const DeviceMemory& memory : report.calls.back().memory) EXPECT_GE(memory.peak, expected_paper);
}

TEST_P(ModelStateMemory, MixedPrecisionAdamMatchesTheZeroPaper) {
  const auto [strategy, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  ASSERT_EQ(kMemoryModel.num_parameters() % 8, 0);
  TrainStep step(kMemoryModel, Optimizer::adam(1e-3), n,
                 {.strategy = strategy, .precision = Precision::mixed_bf16, .reduce_dtype = DType::bf16});
  TrainState state = step.init(kMemoryModel.init_abstract());
  step(sim, state, Array::abstract({n, 8, 784}), Array::abstract({n, 8}, DType::i32));
  expect_mixed_adam_model_states_of_the_zero_paper(step, sim, kMemoryModel.num_parameters());
}

// The same in float32 (params 4, gradients 4, Adam's momentum and variance 8 bytes per parameter).
TEST_P(ModelStateMemory, Float32AdamShardsEachPart) {
  const auto [strategy, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const double psi = static_cast<double>(kMemoryModel.num_parameters());
  TrainStep step(kMemoryModel, Optimizer::adam(1e-3), n, {.strategy = strategy});
  TrainState state = step.init(kMemoryModel.init_abstract());
  step(sim, state, Array::abstract({n, 8, 784}), Array::abstract({n, 8}, DType::i32));
  const double params = 4 * psi / (strategy == Strategy::zero3 ? n : 1);
  const double grads = 4 * psi / (strategy == Strategy::zero2 || strategy == Strategy::zero3 ? n : 1);
  const double optimizer_state = 8 * psi / (strategy == Strategy::dp ? 1 : n);
  for (const MemoryByTag& memory : step.memory_before_update())
    EXPECT_EQ(model_states(memory), params + grads + optimizer_state + kCountBytes);
}

INSTANTIATE_TEST_SUITE_P(Strategies, ModelStateMemory, kEveryStrategyOnUpToEightDevices,
                         strategy_and_devices_name);

// FSDP's mixed precision under zero3: the float32 param shards are the master weights and the reduced
// gradient shards are kept in float32, whichever dtype they were reduced in: 4 + 4 + 8 bytes per parameter
// over N, the paper's 16 Psi / N counted with fp32's P, G and K. The DeepSpeed layout with float32 reduction
// holds 2 Psi / N more (its bfloat16 shards beside fp32 masters, float32 gradient shards).
class Fp32ParamShardsMemory : public ::testing::TestWithParam<std::tuple<DType, int>> {};

TEST_P(Fp32ParamShardsMemory, MixedPrecisionAdamKeepsFsdpModelStates) {
  const auto [reduce_dtype, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const double psi = static_cast<double>(kMemoryModel.num_parameters());
  TrainStep step(kMemoryModel, Optimizer::adam(1e-3), n,
                 {.strategy = Strategy::zero3,
                  .precision = Precision::mixed_bf16,
                  .reduce_dtype = reduce_dtype,
                  .param_shard_dtype = DType::f32});
  TrainState state = step.init(kMemoryModel.init_abstract());
  for (const Array& leaf : state.params.leaves()) EXPECT_EQ(leaf.dtype(), DType::f32);
  // Adam's count, momentum and variance: no master copy
  EXPECT_EQ(state.opt_state.leaves().size(), 1 + 2 * state.params.leaves().size());
  step(sim, state, Array::abstract({n, 8, 784}), Array::abstract({n, 8}, DType::i32));
  EXPECT_EQ(zero_model_state_bytes(Strategy::zero3, kMemoryModel.num_parameters(), n, 4, 4, 8), 16 * psi / n);
  for (const MemoryByTag& memory : step.memory_before_update()) {
    EXPECT_EQ(memory[tags::parameters], 4 * psi / n);
    EXPECT_EQ(memory[tags::gradients], 4 * psi / n);
    EXPECT_EQ(memory[tags::optimizer_state], 8 * psi / n + kCountBytes);
  }
}

INSTANTIATE_TEST_SUITE_P(ReduceDtypes, Fp32ParamShardsMemory,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f32),
                                            ::testing::Values(1, 2, 8)),
                         [](const auto& test_info) {
                           return std::string(dtype_name(std::get<0>(test_info.param))) + "_p" +
                                  std::to_string(std::get<1>(test_info.param));
                         });

// Float32 param shards are FSDP's zero3 layout: refused under the strategies that keep whole params.
TEST(Fp32ParamShards, RefusedWhereParamsAreWhole) {
  const Mlp mlp({32, 16, 8, 4}, Activation::tanh, Loss::softmax_cross_entropy);
  for (Strategy strategy : {Strategy::dp, Strategy::dp_overlap, Strategy::zero1, Strategy::zero2})
    EXPECT_THROW(
        {
          try {
            TrainStep(
                mlp, Optimizer::adam(1e-3), 2,
                {.strategy = strategy, .precision = Precision::mixed_bf16, .param_shard_dtype = DType::f32});
          } catch (const ValueError& e) {
            EXPECT_NE(std::string(e.what()).find("(zero3)"), std::string::npos) << e.what();
            throw;
          }
        },
        ValueError);
}

// The transformer, trained one step in abstract mode through the same TrainStep: ZeRO-3 gathers each fetch
// unit (embeddings, blocks, head) leaf by leaf. Every leaf of this small untied model is a multiple of 8
// elements, so no shard is padded for N <= 8 and the table holds exactly, with psi its exact count.
const Transformer kSmallTransformer(
    {.layers = 2, .hidden = 64, .heads = 8, .seq_len = 32, .vocab = 128, .tied_embeddings = false});

class TransformerModelStateMemory : public ::testing::TestWithParam<std::tuple<Strategy, int>> {};

TEST_P(TransformerModelStateMemory, MixedPrecisionAdamMatchesTheZeroPaper) {
  const auto [strategy, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  for (const Array& leaf : kSmallTransformer.init_abstract().leaves()) ASSERT_EQ(leaf.size() % 8, 0);
  TrainStep step(kSmallTransformer, Optimizer::adam(1e-3), n,
                 {.strategy = strategy, .precision = Precision::mixed_bf16, .reduce_dtype = DType::bf16});
  TrainState state = step.init(kSmallTransformer.init_abstract());
  const Array tokens = Array::abstract({n, 2, kSmallTransformer.config().seq_len}, DType::i32);
  step(sim, state, tokens, tokens);
  expect_mixed_adam_model_states_of_the_zero_paper(step, sim, kSmallTransformer.num_parameters());
}

INSTANTIATE_TEST_SUITE_P(Strategies, TransformerModelStateMemory, kEveryStrategyOnUpToEightDevices,
                         strategy_and_devices_name);

// The state made on the devices (init_on_devices) is laid out as init()'s: a step from it holds the same
// model states, and pmap accepts it in place with the step's in_axes, every device using its own replica of a
// resident in_axes-None leaf (so that tag_as retags each device's buffers, not device 0's).
TEST_P(TransformerModelStateMemory, StateMadeOnTheDevicesIsLaidOutAsInit) {
  const auto [strategy, n] = GetParam();
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  TrainStep step(kSmallTransformer, Optimizer::adam(1e-3), n,
                 {.strategy = strategy, .precision = Precision::mixed_bf16, .reduce_dtype = DType::bf16});
  const TrainState state = step.init_on_devices(sim);
  const Array tokens = Array::abstract({n, 2, kSmallTransformer.config().seq_len}, DType::i32);
  step(sim, state, tokens, tokens);
  expect_mixed_adam_model_states_of_the_zero_paper(step, sim, kSmallTransformer.num_parameters());
}

// Real arrays cost the same memory as abstract ones: the small model's measured model state on 4 devices
// equals the formula too (Psi = 700, every leaf a multiple of 4).
TEST(ModelStateMemoryReal, SmallModelOnFourDevicesMatchesTheFormula) {
  const int n = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const Mlp mlp({32, 16, 8, 4}, Activation::tanh, Loss::softmax_cross_entropy);
  ASSERT_EQ(mlp.num_parameters(), 700);
  std::mt19937 gen(1);
  for (Strategy strategy : {Strategy::dp, Strategy::zero1, Strategy::zero2, Strategy::zero3}) {
    TrainStep step(mlp, Optimizer::adam(1e-3), n, {.strategy = strategy, .precision = Precision::mixed_bf16});
    step(sim, step.init(mlp.init(0)), shard_batch(random_normal({8, 32}, gen), n),
         shard_batch(random_labels(8, 4, gen), n));
    for (const MemoryByTag& memory : step.memory_before_update())
      EXPECT_EQ(model_states(memory), zero_model_state_bytes(strategy, 700, n) + kCountBytes)
          << strategy_name(strategy);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Communication volume per step (ZeRO paper section 7): dp and ZeRO-2 move 2 Psi, ZeRO-1 as specified here
// (all-reduce, then all-gather) 3 Psi, ZeRO-3 3 Psi. Under the ring algorithms every device sends
// (N - 1) / N of each all-gather's and reduce-scatter's data and 2 (N - 1) / N of each all-reduce's.

class CommunicationVolume : public ::testing::TestWithParam<Strategy> {};

TEST_P(CommunicationVolume, BytesSentPerDeviceAreTheRingVolumes) {
  const Strategy strategy = GetParam();
  const int n = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const double psi = static_cast<double>(kMemoryModel.num_parameters());
  TrainStep step(kMemoryModel, Optimizer::sgd(0.1), n,
                 {.strategy = strategy, .precision = Precision::mixed_bf16});
  step(sim, step.init(kMemoryModel.init_abstract()), Array::abstract({n, 8, 784}),
       Array::abstract({n, 8}, DType::i32));
  const double unit = (n - 1.0) / n * 2 * psi;  // one all-gather or reduce-scatter of the bf16 params
  const double units = strategy == Strategy::dp      ? 2
                       : strategy == Strategy::zero1 ? 3
                       : strategy == Strategy::zero2 ? 2
                                                     : 3;
  const auto call = sim.report().calls.back();
  double total = 0;
  for (const auto& times : call.times) total += times.bytes_sent;
  // The loss's pmean (one float32, all-reduced by the ring: 2 (N - 1) sends of 4 bytes in all) comes on top.
  EXPECT_EQ(total, n * units * unit + 2 * (n - 1) * 4.0);
}

INSTANTIATE_TEST_SUITE_P(Strategies, CommunicationVolume,
                         ::testing::Values(Strategy::dp, Strategy::zero1, Strategy::zero2, Strategy::zero3),
                         [](const auto& test_info) { return std::string(strategy_name(test_info.param)); });

// ---------------------------------------------------------------------------------------------------------
// Layout and errors

TEST(Sharding, LeavesAreFlattenedPaddedAndRoundTrip) {
  const Array leaf = Array::from_values({2, 3}, {1, 2, 3, 4, 5, 6});
  const Array shards = shard_leaf(leaf, 4);  // 6 elements over 4 devices: shards of 2, two zeros of padding
  EXPECT_EQ(shards.shape(), (Shape{4, 2}));
  EXPECT_TRUE(array_equal(shards, Array::from_values({4, 2}, {1, 2, 3, 4, 5, 6, 0, 0})));
  EXPECT_TRUE(array_equal(unshard_leaf(shards, {2, 3}), leaf));
  EXPECT_EQ(shard_size(6, 4), 2);
  EXPECT_EQ(shard_size(8, 4), 2);
  EXPECT_EQ(shard_size(9, 4), 3);
}

// A model whose leaves do not divide by N still trains exactly: the padding stays zero.
TEST(Sharding, PaddedShardsTrainLikeUnpaddedOnes) {
  const int n = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(n)));
  const Mlp mlp({5, 3, 2}, Activation::tanh, Loss::mse);  // leaves of 15, 3, 6 and 2 elements
  std::mt19937 gen(3);
  const Array x = random_normal({8, 5}, gen);
  const Array y = random_normal({8, 2}, gen);
  const Optimizer adam = Optimizer::adam(1e-2);
  const Reference ref = reference_run(mlp, adam, false, mlp.init(4), x, y);
  for (Strategy strategy : {Strategy::zero1, Strategy::zero2, Strategy::zero3}) {
    TrainStep step(mlp, adam, n, {.strategy = strategy});
    TrainState state = step.init(mlp.init(4));
    for (int s = 0; s < kSteps; ++s) state = step(sim, state, shard_batch(x, n), shard_batch(y, n)).state;
    const Comparison c = compare(step.full_params(sim, state), ref.params_after.back(), 1e-5, 1e-6);
    EXPECT_TRUE(c.close) << strategy_name(strategy) << ": " << c.max_abs_error;
    // The padding of every sharded state leaf is still zero.
    const Tree state_host = sim.device_get(state.opt_state);
    for (const char* entry : {"mu", "nu"}) {
      const Array stacked =
          state_host[entry][0]["w"].leaf();  // 15 elements over 4 devices: 1 padding element
      EXPECT_EQ(stacked.shape(), (Shape{4, 4}));
      EXPECT_EQ(stacked.item(15), 0.0) << strategy_name(strategy) << " " << entry;
    }
  }
}

TEST(StrategyRegistry, EveryStrategyIsRegisteredByNameWithADescription) {
  std::vector<std::string> names;
  for (const StrategyInfo& info : training_strategies()) {
    names.emplace_back(info.name);
    EXPECT_EQ(strategy_name(info.strategy), info.name);
    EXPECT_EQ(parse_strategy(info.name), info.strategy);
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"dp", "dp-overlap", "zero1", "zero2", "zero3"}));
}

TEST(StrategyRegistry, AnUnknownNameListsTheRegisteredOnes) {
  try {
    parse_strategy("zero");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown training strategy 'zero' (valid: dp, dp-overlap, zero1, zero2, zero3)");
  }
}

TEST(TrainStepErrors, BadConfigurationsAreValueErrors) {
  const Mlp mlp({4, 2});
  try {
    TrainStep(mlp, Optimizer::sgd(0.1), 2, {.micro_batches = 0});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "micro_batches must be at least 1, got 0");
  }
  try {
    parse_strategy("zero4");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown training strategy 'zero4' (valid: dp, dp-overlap, zero1, zero2, zero3)");
  }
  try {
    shard_batch(Array::zeros({10, 4}), 4);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "a batch of shape (10, 4) cannot be split evenly over 4 devices");
  }
  EXPECT_THROW(TrainStep(mlp, Optimizer::sgd(0.1), 2).init(Mlp({4, 3}).init(0)), ValueError);
}

TEST(TrainStepErrors, AMicroBatchCountThatDoesNotDivideTheBatchIsAValueError) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  const Mlp mlp({4, 2});
  TrainStep step(mlp, Optimizer::sgd(0.1), 2, {.micro_batches = 3});
  try {
    step(sim, step.init(mlp.init(0)), Array::zeros({2, 4, 4}), Array::zeros({2, 4, 2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "train_step: a per-device batch of 4 examples cannot be cut into 3 equal micro-batches");
  }
}

}  // namespace
}  // namespace spmdsim::models
