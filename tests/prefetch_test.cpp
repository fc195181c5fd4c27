// Asynchronous device_put and batch prefetching: a put returns at once; a step waits only for what has not
// arrived, so under the pinned alpha-beta model the run is shorter by exactly the transfers that compute
// hid; values do not change; the batches in flight take device memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/batch_prefetcher.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/residency.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// The free-compute test cluster: each device's host link 10 GB/s, 1 us.
constexpr double kHostLatency = 1e-6;
constexpr double kHostBeta = 1.0 / 10e9;
constexpr int kDevices = 2;
// A batch: 1000 float32 features and 250 float32 targets per device, sent together: one latency, then
// 5000 bytes at the link rate.
constexpr double kBatchBytes = 5000;
constexpr double kTransfer = kHostLatency + kBatchBytes * kHostBeta;  // 1.5 us

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::abs(expected)) << "actual " << actual << " expected " << expected;
}

// Free compute but for a fixed launch overhead: a step of one op computes exactly `compute` seconds.
Simulation fixed_compute_simulation(Seconds compute) {
  auto spec = testing::free_compute_cluster(kDevices);
  spec.device.launch_overhead = compute;
  return Simulation(topologies::switch_cluster(spec), {alpha_beta_config(), {}});
}

Tree batch() {
  return Tree::tuple({Array::full({kDevices, 1000}, 1.0), Array::full({kDevices, 250}, 2.0)});
}

// One op on the batch: `compute` seconds.
PmappedFunction one_op_step() {
  return pmap([](const Args& a) -> Tree { return sum(a[0].array()); }, {.name = "step"});
}

struct StepTimes {
  double run = 0;                 // the whole run's simulated time
  std::vector<double> transfers;  // device 0's transfer time in each step
};

// `steps` steps of one_op_step(), each batch put `prefetch` steps ahead (0: sent by the step's own call).
StepTimes run_steps(Seconds compute, int steps, int prefetch) {
  const auto numbers = testing::in_child_process([=] {
    auto sim = fixed_compute_simulation(compute);
    const auto step = one_op_step();
    std::vector<Tree> in_flight;  // put, oldest first
    int next_put = 0;
    for (int s = 0; s < steps; ++s) {
      if (prefetch == 0) {
        step(sim, {batch()[0], batch()[1]});
        continue;
      }
      for (; next_put <= s + prefetch && next_put < steps; ++next_put) {
        const double before = sim.now();
        in_flight.push_back(sim.device_put_sharded(batch()));
        EXPECT_EQ(sim.now(), before);  // the host goes on at once
      }
      const Tree current = in_flight.front();
      in_flight.erase(in_flight.begin());
      step(sim, {current[0], current[1]});
    }
    std::vector<double> out{sim.now()};
    for (const auto& call : sim.report().calls) out.push_back(call.times[0].transfer);
    return out;
  });
  return {numbers.front(), std::vector<double>(numbers.begin() + 1, numbers.end())};
}

// ---------------------------------------------------------------------------------------------------------
// Timing under the pinned alpha-beta model

TEST(PrefetchTime, ComputeLongerThanTheTransferHidesEveryBatchButTheFirst) {
  const int steps = 4;
  const Seconds compute = 5e-6;
  const auto plain = run_steps(compute, steps, 0);
  const auto prefetched = run_steps(compute, steps, 1);
  ASSERT_EQ(plain.transfers.size(), static_cast<std::size_t>(steps));
  ASSERT_EQ(prefetched.transfers.size(), static_cast<std::size_t>(steps));
  for (double t : plain.transfers) expect_seconds(t, kTransfer);
  expect_seconds(plain.run, steps * (kTransfer + compute));
  // Batch 0 is waited for; batch k + 1 travels while step k computes and has arrived when step k + 1 starts.
  expect_seconds(prefetched.transfers[0], kTransfer);
  for (int s = 1; s < steps; ++s)
    EXPECT_EQ(prefetched.transfers[static_cast<std::size_t>(s)], 0.0) << "step " << s;
  expect_seconds(prefetched.run, kTransfer + steps * compute);
  expect_seconds(plain.run - prefetched.run, (steps - 1) * kTransfer);
}

TEST(PrefetchTime, TransferLongerThanComputeExposesTheDifference) {
  const int steps = 4;
  const Seconds compute = 0.5e-6;
  const auto plain = run_steps(compute, steps, 0);
  const auto prefetched = run_steps(compute, steps, 1);
  expect_seconds(plain.run, steps * (kTransfer + compute));
  // Each device's copies run back to back: batch k arrives at (k + 1) T; step k starts at k T + compute.
  expect_seconds(prefetched.transfers[0], kTransfer);
  for (int s = 1; s < steps; ++s)
    expect_seconds(prefetched.transfers[static_cast<std::size_t>(s)], kTransfer - compute);
  expect_seconds(prefetched.run, steps * kTransfer + compute);
}

TEST(PrefetchTime, TwoAheadQueuesTheCopiesBehindEachOther) {
  const int steps = 4;
  const Seconds compute = 5e-6;
  const auto prefetched = run_steps(compute, steps, 2);
  // Batches 0, 1, 2 are put before step 0 and travel one after another: only batch 0 is waited for.
  expect_seconds(prefetched.transfers[0], kTransfer);
  for (int s = 1; s < steps; ++s)
    EXPECT_EQ(prefetched.transfers[static_cast<std::size_t>(s)], 0.0) << "step " << s;
  expect_seconds(prefetched.run, kTransfer + steps * compute);
}

// ---------------------------------------------------------------------------------------------------------
// device_put itself

TEST(DevicePut, TakesDeviceMemoryAtOnceAndDeviceGetWaitsForTheCopy) {
  auto sim = fixed_compute_simulation(0);
  const Array x = Array::arange(kDevices * 1000, DType::f32).reshaped({kDevices, 1000});
  const Tree put = sim.device_put_sharded(Tree(x));
  EXPECT_EQ(sim.now(), 0.0);
  const auto report = sim.report();
  for (const auto& timeline : report.memory_timelines) {
    ASSERT_FALSE(timeline.empty());
    EXPECT_EQ(timeline.back().in_use, 4000);
    EXPECT_EQ(timeline.back().tag, MemoryTag::input_shards);
  }
  // The copy (host->device), then the read back (device->host), each a latency and 4000 bytes per link.
  const Array back = sim.device_get(put).leaf();
  expect_seconds(sim.now(), 2 * (kHostLatency + 4000 * kHostBeta));
  EXPECT_TRUE(array_equal(back, x));
  const auto spans = sim.report().calls.back().spans[0];
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].name, "host->device");
  EXPECT_EQ(spans[1].name, "device->host");
}

TEST(DevicePut, ACallEndsWithoutWaitingForCopiesStillInFlight) {
  auto sim = fixed_compute_simulation(0);
  const Tree big = sim.device_put_sharded(Tree(Array::zeros({kDevices, 1000000})));  // 400 us a device
  auto identity = pmap([](const Args& a) -> Tree { return a[0].array(); });
  identity(sim, {Array::full({kDevices, 1}, 1.0)});
  // The call's 4 bytes share each host link with the copy (half its rate each) and the call ends with them.
  expect_seconds(sim.now(), kHostLatency + 2 * 4 * kHostBeta);
  // The copy went on during the call (4 bytes at half the rate) and finishes alone in the read's run, at
  // L + (4e6 + 4) beta; then the read back, L + 4e6 beta.
  sim.device_get(big);
  expect_seconds(sim.now(), 2 * kHostLatency + (8e6 + 4) * kHostBeta);
}

// The device's work ends as its copy of x arrives, at the moment the copy of y starts: the call ends then,
// with y's transfer, and the actor taking it on the device, still to go.
TEST(DevicePut, ACallEndingAsTheNextCopyStartsEndsThen) {
  auto sim = fixed_compute_simulation(0);
  const Array x = Array::full({kDevices, 1000}, 1.0);
  const Tree put_x = sim.device_put_sharded(Tree(x));
  const Tree put_y = sim.device_put_sharded(Tree(Array::zeros({kDevices, 1000000})));
  auto identity = pmap([](const Args& a) -> Tree { return a[0].array(); });
  const Tree out = identity(sim, {put_x.leaf()});
  const Seconds x_arrives = kHostLatency + 4000 * kHostBeta;
  expect_seconds(sim.now(), x_arrives);
  sim.device_get(put_y);
  expect_seconds(sim.now(), x_arrives + 2 * (kHostLatency + 4e6 * kHostBeta));
  EXPECT_TRUE(array_equal(sim.device_get(out).leaf(), x));
}

TEST(DevicePut, ACallThatFailsLeavesTheCopiesInFlight) {
  auto sim = fixed_compute_simulation(0);
  const Array x = Array::full({kDevices, 1000}, 4.0);
  const Tree put = sim.device_put_sharded(Tree(x));
  auto failing = pmap([](const Args&) -> Tree { throw ValueError("the device function failed"); });
  EXPECT_THROW(failing(sim, {Array::full({kDevices, 1}, 1.0)}), ValueError);
  EXPECT_TRUE(array_equal(sim.device_get(put).leaf(), x));
}

TEST(DevicePut, ReplicatedCopiesAreUsedInPlaceByInAxesNone) {
  auto sim = fixed_compute_simulation(0);
  const Tree weights = sim.device_put_replicated(Tree(Array::full({250}, 3.0)), {0, 1});
  auto scale = pmap([](const Args& a) -> Tree { return a[0].array() * a[1].array(); },
                    {.in_axes = Axes::tuple({0, none})});
  // The sharded argument (1000 bytes a device) travels with the call beside the copy in flight (1000 bytes).
  const Tree out = scale(sim, {Array::full({kDevices, 250}, 2.0), weights});
  const auto report = sim.report();
  for (const auto& times : report.calls.back().times)
    expect_seconds(times.transfer, kHostLatency + 2000 * kHostBeta);
  EXPECT_EQ(sim.device_get(out).leaf().item(0), 6.0);
}

TEST(DevicePut, RefusesWhatItCannotSplit) {
  auto sim = fixed_compute_simulation(0);
  const auto expect_error = [](const std::function<void()>& put, const std::string& message) {
    try {
      put();
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  expect_error([&] { sim.device_put_sharded(Tree(Array::scalar(1.0))); },
               "device_put_sharded: an array of shape () has no leading axis to split over the devices");
  expect_error(
      [&] {
        sim.device_put_sharded(Tree::tuple({Array::zeros({2, 3}), Array::zeros({1, 3})}));
      },
      "device_put_sharded: leading axes of different sizes (2 and 1); every leaf needs one entry per "
      "device");
  expect_error(
      [&] {
        sim.device_put_sharded(Tree(Array::zeros({3, 3})));
      },
      "device_put_sharded: a leading axis of 3 needs 3 devices, the platform has 2");
  expect_error(
      [&] {
        sim.device_put_sharded(Tree(Array::zeros({2, 3})), std::vector<int>{1});
      },
      "device_put_sharded: a leading axis of 2 entries for 1 devices; they must be equal");
  expect_error(
      [&] {
        sim.device_put_sharded(Tree(Array::zeros({2, 3})), std::vector<int>{0, 2});
      },
      "device_put_sharded: no device 2 on this platform (devices 0..1)");
  expect_error(
      [&] {
        sim.device_put_replicated(Tree(Array::zeros({3})), {1, 1});
      },
      "device_put_replicated: each device may appear once, got [1, 1]");
  expect_error([&] { sim.device_put_replicated(Tree::tuple({}), {0}); },
               "device_put_replicated: the tree PyTreeDef(()) has no array to put");
}

// ---------------------------------------------------------------------------------------------------------
// Training with prefetched batches: the MLP on real data

constexpr std::int64_t kGlobalBatch = 8;
constexpr int kSteps = 4;
const std::vector<std::int64_t> kLayers{6, 10, 3};
// Per device: 4 samples of 6 float32 features and 4 int32 labels.
constexpr Bytes kBatchBytesPerDevice = 4 * 6 * 4 + 4 * 4;

std::pair<Array, Array> mlp_batch(int step) {
  std::mt19937 gen(static_cast<unsigned>(100 + step));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> label(0, 2);
  std::vector<double> x(static_cast<std::size_t>(kGlobalBatch * kLayers.front()));
  std::vector<double> y(static_cast<std::size_t>(kGlobalBatch));
  for (auto& v : x) v = normal(gen);
  for (auto& v : y) v = label(gen);
  return {models::shard_batch(Array::from_values({kGlobalBatch, kLayers.front()}, x), kDevices),
          models::shard_batch(Array::from_values({kGlobalBatch}, y, DType::i32), kDevices)};
}

// Losses of every step, the final params (flattened), then the largest device peak.
std::vector<double> train_mlp(int prefetch) {
  return testing::in_child_process([=] {
    Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)),
                   {alpha_beta_config(), {}});
    const models::Mlp mlp(kLayers, models::Activation::tanh, models::Loss::softmax_cross_entropy);
    const models::TrainStep step(mlp, models::Optimizer::adam(1e-2), kDevices);
    models::TrainState state = step.init(mlp.init(7));
    models::BatchPrefetcher batches(sim, step, mlp_batch, kSteps, prefetch);
    std::vector<double> out;
    for (int s = 0; s < kSteps; ++s) {
      const auto [x, y] = batches.next();
      auto result = step(sim, state, x, y);
      state = std::move(result.state);
      out.push_back(sim.device_get(Tree(result.loss)).leaf().item(0));
    }
    for (const Array& leaf : step.full_params(sim, state).leaves())
      for (double v : leaf.to_doubles()) out.push_back(v);
    double peak = 0;
    for (const auto& memory : sim.report().memory) peak = std::max(peak, memory.peak);
    out.push_back(peak);
    return out;
  });
}

TEST(PrefetchTraining, LossesAndParamsAreBitIdentical) {
  auto plain = train_mlp(0);
  auto prefetched = train_mlp(2);
  ASSERT_EQ(plain.size(), prefetched.size());
  plain.pop_back();  // the peaks differ: see below
  prefetched.pop_back();
  EXPECT_EQ(plain, prefetched);
}

TEST(PrefetchTraining, EachBatchInFlightTakesItsBytesOnEveryDevice) {
  const double plain = train_mlp(0).back();
  for (int prefetch : {1, 2})
    EXPECT_EQ(train_mlp(prefetch).back(), plain + prefetch * kBatchBytesPerDevice) << "prefetch " << prefetch;
}

TEST(PrefetchTraining, NegativeSizeIsRefused) {
  auto sim = fixed_compute_simulation(0);
  const models::Mlp mlp(kLayers);
  const models::TrainStep step(mlp, models::Optimizer::sgd(0.1), kDevices);
  try {
    models::BatchPrefetcher(sim, step, mlp_batch, kSteps, -1);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "prefetch size must be 0 or more, got -1");
  }
}

}  // namespace
}  // namespace spmdsim
