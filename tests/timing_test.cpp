// Under SimGrid's pinned alpha-beta model (CM02, no cross-traffic, no TCP window) simulated times equal the
// closed forms exactly: the ring all-reduce of Thakur, Rabenseifner & Gropp (2005) and the host transfers.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// The free-compute test cluster: alpha = two 1 us fabric links, beta = 1 / 100 GB/s; host links 10 GB/s, 1
// us.
constexpr double kAlpha = 2e-6;
constexpr double kBeta = 1.0 / 100e9;
constexpr double kHostLatency = 1e-6;
constexpr double kHostBeta = 1.0 / 10e9;

Simulation alpha_beta_simulation(int p) {
  return Simulation(topologies::switch_cluster(testing::free_compute_cluster(p)), {alpha_beta_config(), {}});
}

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected))
      << "actual " << actual << " expected " << expected;
}

// psum of `floats_per_device` float32 on p devices; returns the report of the call.
CallReport run_psum(Simulation& sim, int p, std::int64_t floats_per_device, bool abstract) {
  const Shape shape{p, floats_per_device};
  Array x = abstract ? Array::abstract(shape) : Array::full(shape, 1.0);
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {x});
  return sim.report().calls.back();
}

class RingAllReduceTime : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceTime, EqualsTheClosedForm) {
  const int p = GetParam();
  const std::int64_t floats = 3 * 5 * 7 * 8 * 1024;  // divisible by every p below, so chunks are equal
  auto sim = alpha_beta_simulation(p);
  const auto call = run_psum(sim, p, floats, /*abstract=*/false);
  const double n = static_cast<double>(floats) * 4;
  const double expected = p == 1 ? 0.0 : 2 * (p - 1) * kAlpha + 2.0 * (p - 1) / p * n * kBeta;
  for (const auto& times : call.times) {
    const double psum_time = times.communication.count("psum") ? times.communication.at("psum") : 0.0;
    expect_seconds(psum_time, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(DeviceCounts, RingAllReduceTime, ::testing::Values(1, 2, 3, 4, 5, 7, 8, 16),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "p" + std::to_string(param.param);
                         });

// psum over a tree is one all-reduce per dtype of its leaves joined: the closed form of their total bytes,
// one ring's latencies for all of them.
TEST(RingAllReduceTime, ATreeCostsOneRingPerDtype) {
  const int p = 4;
  auto sim = alpha_beta_simulation(p);
  const Tree grads = Tree::list(
      {Array::full({p, 1000}, 1.0), Array::full({p, 24}, 1.0), Array::full({p, 16}, 1.0, DType::i32)});
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].tree(), "i"); }, {.axis_name = "i"});
  f(sim, {grads});
  const auto ring = [](double n) { return 2 * (p - 1) * kAlpha + 2.0 * (p - 1) / p * n * kBeta; };
  const SimulationReport report = sim.report();
  for (const auto& times : report.calls.back().times)
    expect_seconds(times.communication.at("psum"), ring(1024 * 4) + ring(16 * 4));
}

TEST(HostTransferTime, MappedAndReplicatedInputsShareEachDevicesHostLink) {
  const int p = 4;
  auto sim = alpha_beta_simulation(p);
  Array sharded = Array::full({p, 1000}, 1.0);  // 4000 bytes per device
  Array replicated = Array::full({250}, 2.0);   // 1000 bytes to every device
  auto f = pmap([](const Args& a) -> Tree { return a[0].array(); }, {.in_axes = Axes::tuple({0, none})});
  f(sim, {sharded, replicated});
  const auto call = sim.report().calls.back();
  // Both messages start together on the device's own link: one latency, then all bytes at the link rate.
  for (const auto& times : call.times) expect_seconds(times.transfer, kHostLatency + 5000 * kHostBeta);
}

TEST(HostTransferTime, DeviceGetReadsOneShardPerDeviceOnce) {
  const int p = 2;
  auto sim = alpha_beta_simulation(p);
  auto f = pmap([](const Args& a) -> Tree { return a[0].array(); });
  Tree out = f(sim, {Array::full({p, 500}, 1.0)});
  const double before = sim.now();
  sim.device_get(out);
  expect_seconds(sim.now() - before, kHostLatency + 2000 * kHostBeta);
  const auto read = sim.report().calls.back();
  for (std::size_t k = 0; k < read.times.size(); ++k) {
    expect_seconds(read.times[k].transfer, kHostLatency + 2000 * kHostBeta);
    ASSERT_EQ(read.spans[k].size(), 1u);
    expect_seconds(read.spans[k][0].end - read.spans[k][0].start, kHostLatency + 2000 * kHostBeta);
  }
  const double after_first_read = sim.now();
  sim.device_get(out);
  EXPECT_EQ(sim.now(), after_first_read);
}

TEST(HostTransferTime, AResultPassedBackOnTheSameDevicesStaysThere) {
  const int p = 4;
  auto sim = alpha_beta_simulation(p);
  auto step = pmap([](const Args& a) -> Tree { return a[0].array() * 2.0; });
  Tree x = step(sim, {Array::full({p, 100}, 1.0)});
  Tree y = step(sim, {x});
  const auto call = sim.report().calls.back();
  for (const auto& times : call.times) EXPECT_EQ(times.transfer, 0.0);
  EXPECT_EQ(sim.device_get(y).leaf().item(0), 4.0);
}

// Both calls run in one simulation (one engine per process), the abstract one later on the clock: their
// durations are differences of different absolute times, equal up to the last bits of a double.
TEST(AbstractMode, CostsAndSizesExactlyAsRealArrays) {
  const int p = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto step = pmap(
      [](const Args& a) -> Tree {
        Array h = tanh(matmul(a[0].array(), a[1].array()));
        return Tree::tuple({psum(sum(h, 0), "i"), all_gather(h, "i")});
      },
      {.in_axes = Axes::tuple({0, none}), .axis_name = "i"});
  auto run = [&](bool abstract) {
    auto make = [abstract](Shape shape) {
      return abstract ? Array::abstract(shape) : Array::full(shape, 0.5);
    };
    step(sim, {make({p, 32, 64}), make({64, 16})});
    return sim.report().calls.back();
  };
  const auto real = run(false);
  const auto abstract = run(true);
  EXPECT_GT(real.times[0].compute, 0.0);
  expect_seconds(abstract.end - abstract.start, real.end - real.start);
  for (std::size_t d = 0; d < real.times.size(); ++d) {
    expect_seconds(abstract.times[d].compute, real.times[d].compute);
    expect_seconds(abstract.times[d].transfer, real.times[d].transfer);
    for (const auto& [name, seconds] : real.times[d].communication)
      expect_seconds(abstract.times[d].communication.at(name), seconds);
    EXPECT_EQ(real.times[d].bytes_sent, abstract.times[d].bytes_sent);
    EXPECT_EQ(real.memory[d].peak, abstract.memory[d].peak);
    EXPECT_EQ(real.memory[d].at_peak, abstract.memory[d].at_peak);
  }
}

// A collective is one kernel on each device of its group: it pays the device's launch once per call, before
// its algorithm (docs/collectives.md#the-kernel-launch). A group of one device pays none.
constexpr double kLaunch = 5e-6;

Simulation launching_simulation(int p) {
  auto cluster = testing::free_compute_cluster(p);
  cluster.device.launch_overhead = kLaunch;
  return Simulation(topologies::switch_cluster(cluster), {alpha_beta_config(), {}});
}

TEST(CollectiveLaunch, APsumPaysItsDevicesLaunchBeforeItsRing) {
  const int p = 4;
  const std::int64_t floats = 4096;
  auto sim = launching_simulation(p);
  const auto call = run_psum(sim, p, floats, /*abstract=*/true);
  const double n = static_cast<double>(floats) * 4;
  for (const auto& times : call.times)
    expect_seconds(times.communication.at("psum"),
                   kLaunch + 2 * (p - 1) * kAlpha + 2.0 * (p - 1) / p * n * kBeta);
}

TEST(CollectiveLaunch, AGroupOfOneDevicePaysNone) {
  auto sim = launching_simulation(1);
  const auto call = run_psum(sim, 1, 4096, /*abstract=*/true);
  const auto& communication = call.times.at(0).communication;
  EXPECT_EQ(communication.count("psum") ? communication.at("psum") : 0.0, 0.0);
}

// Each device sends its block to the other at once: one message each way, alpha + n beta after the launch.
TEST(CollectiveLaunch, APpermutePaysItToo) {
  const std::int64_t floats = 4096;
  auto sim = launching_simulation(2);
  auto swap = pmap(
      [](const Args& a) -> Tree {
        return ppermute(a[0].array(), "i", {{0, 1}, {1, 0}});
      },
      {.axis_name = "i"});
  swap(sim, {Array::abstract({2, floats})});
  const double n = static_cast<double>(floats) * 4;
  const SimulationReport report = sim.report();
  for (const auto& times : report.calls.back().times)
    expect_seconds(times.communication.at("ppermute"), kLaunch + kAlpha + n * kBeta);
}

// A matmul that reads an operand transposed takes the time of the product of an operand already laid out
// so (one kernel, no copy); matmul(transpose(x), y) also pays for the copy.
TEST(MatmulTime, ATransposedOperandCostsNoCopy) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)));
  const auto compute = [&](std::function<Array(const Array&, const Array&)> product, Shape x_shape) {
    auto f = pmap([&](const Args& a) -> Tree { return Tree(product(a[0].array(), a[1].array())); },
                  {.in_axes = Axes::tuple({0, 0})});
    f(sim, {Array::abstract(std::move(x_shape)), Array::abstract({1, 512, 128})});
    return sim.report().calls.back().times[0].compute;
  };
  const double laid_out = compute([](const Array& x, const Array& y) { return matmul(x, y); }, {1, 256, 512});
  const double folded =
      compute([](const Array& x, const Array& y) { return matmul(x, y, {.a = true}); }, {1, 512, 256});
  const double copied =
      compute([](const Array& x, const Array& y) { return matmul(transpose(x), y); }, {1, 512, 256});
  EXPECT_GT(laid_out, 0);
  expect_seconds(folded, laid_out);
  EXPECT_GT(copied, laid_out);
}

}  // namespace
}  // namespace spmdsim
