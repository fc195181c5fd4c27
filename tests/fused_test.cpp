// spmdsim::fused: a chain of ops charged as one kernel (one launch, its boundary bytes, no intermediate in
// device memory) with the values of the same ops run one by one; and the optimizers' fused form, whose
// update must be the unfused one bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr std::int64_t kFloats = 1000;

Array input() {
  std::vector<double> values;
  for (std::int64_t i = 0; i < kFloats; ++i) values.push_back(0.001 * static_cast<double>(i) - 0.5);
  return Array::from_values({1, kFloats}, values);
}

Array chain(const Array& x) {
  return tanh(x * 2.0 + x);
}

// On the round-numbers device (1 TFLOP/s, 100 GB/s, 1 us launch) the kernel reads x and writes its result,
// 2 x 4000 bytes, memory-bound whatever the three ops' FLOPs: 1 us + 8000 / 1e11 s. Device memory holds the
// input shard and the result, never the two intermediates.
TEST(Fused, IsOneKernelOfItsBoundaryBytesWithTheUnfusedValues) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)));
  Tree out = pmap([](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return fused("chain", {x}, [&] { return std::vector{chain(x)}; }).front();
  })(sim, {input()});
  const auto report = sim.report();
  const auto& spans = report.calls.back().spans.at(0);
  std::vector<Span> compute;
  for (const Span& span : spans)
    if (span.kind == SpanKind::compute) compute.push_back(span);
  ASSERT_EQ(compute.size(), 1u);
  EXPECT_EQ(compute[0].name, "chain");
  EXPECT_NEAR(compute[0].end - compute[0].start, 1e-6 + 8000 / 1e11, 1e-18);
  EXPECT_NEAR(report.calls.back().times.at(0).compute, 1e-6 + 8000 / 1e11, 1e-18);
  EXPECT_EQ(report.calls.back().memory.at(0).peak, 2 * kFloats * 4);
  EXPECT_TRUE(array_equal(sim.device_get(out).leaf(), chain(input())));
}

// Given its own FLOP count the kernel is charged that count, not its body's: 1e6 FLOPs at 1 TFLOP/s outlast
// its 8000 bytes at 100 GB/s. A count that is not positive is refused.
TEST(Fused, AKernelsOwnFlopCountReplacesItsBodys) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)));
  pmap([](const Args& a) -> Tree {
    const Array& x = a[0].array();
    EXPECT_THROW(fused("chain", {x}, 0.0, [&] { return std::vector{chain(x)}; }), ValueError);
    return fused("chain", {x}, 1e6, [&] { return std::vector{chain(x)}; }).front();
  })(sim, {input()});
  EXPECT_NEAR(sim.report().calls.back().times.at(0).compute, 1e-6 + 1e6 / 1e12, 1e-18);
}

// With SimulationOptions::fusion off the same body runs op by op: three kernels (multiply, add, tanh), each
// reading its operands and writing its result (x * 2.0: 4000 + 4 + 4000 bytes, the scalar a 0-d float32;
// + x: 3 x 4000; tanh: 2 x 4000), each with its launch, the same values.
TEST(Fused, FusionOffRunsEachOpAsItsOwnKernel) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)), {.fusion = false});
  Tree out = pmap([](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return fused("chain", {x}, [&] { return std::vector{chain(x)}; }).front();
  })(sim, {input()});
  const auto report = sim.report();
  std::vector<std::string> names;
  for (const Span& span : report.calls.back().spans.at(0))
    if (span.kind == SpanKind::compute) names.push_back(span.name);
  EXPECT_EQ(names, (std::vector<std::string>{"multiply", "add", "tanh"}));
  EXPECT_NEAR(report.calls.back().times.at(0).compute, 3e-6 + (7 * 4000 + 4) / 1e11, 1e-18);
  EXPECT_TRUE(array_equal(sim.device_get(out).leaf(), chain(input())));
}

// A small MLP, one Adam step on 2 devices: on each device one adam_update kernel per parameter leaf, and the
// same parameters as unfused Adam.
std::vector<double> adam_step(bool fuse) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  const models::Mlp mlp({8, 6, 4}, models::Activation::tanh, models::Loss::softmax_cross_entropy);
  const auto adam = models::Optimizer::adam(1e-2);
  const models::TrainStep step(mlp, fuse ? adam.fused() : adam, 2);
  std::vector<double> x;
  for (int i = 0; i < 2 * 3 * 8; ++i) x.push_back(std::sin(0.3 * i));
  const auto result = step(sim, step.init(mlp.init(0)), Array::from_values({2, 3, 8}, x),
                           Array::from_values({2, 3}, {0, 1, 2, 3, 0, 1}, DType::i32));
  std::vector<double> outcome;
  for (const Array& leaf : step.full_params(sim, result.state).leaves())
    for (double v : leaf.to_doubles()) outcome.push_back(v);
  double kernels = 0;
  const auto report = sim.report();
  for (const Span& span : report.calls.front().spans.at(0)) kernels += span.name == "adam_update";
  outcome.push_back(kernels);
  return outcome;
}

TEST(FusedOptimizer, AdamUpdatesEachLeafInOneKernelToTheUnfusedValues) {
  auto fused_run = testing::in_child_process([] { return adam_step(true); });
  auto unfused_run = adam_step(false);
  EXPECT_EQ(fused_run.back(), 4.0) << "two layers of {b, w}";
  EXPECT_EQ(unfused_run.back(), 0.0);
  fused_run.pop_back();
  unfused_run.pop_back();
  EXPECT_EQ(fused_run, unfused_run);
}

}  // namespace
}  // namespace spmdsim
