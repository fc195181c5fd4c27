// Device memory: every buffer is counted from allocation to release with what it holds, and a buffer that
// does not fit is an out-of-memory error naming the device, the allocation and the live buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

Bytes at_peak(const DeviceMemory& memory, MemoryTag tag) {
  return memory.at_peak[tag.index()];
}

// Every allocation (positive) and release (negative) of collective scratch on one device, in order.
std::vector<Bytes> scratch_deltas(const MemoryTimeline& timeline) {
  std::vector<Bytes> deltas;
  for (const MemoryEvent& e : timeline)
    if (e.tag == MemoryTag::collective_scratch) deltas.push_back(e.delta);
  return deltas;
}

TEST(Memory, InputsOutputsAndTemporariesAreTaggedAtThePeak) {
  const int p = 2;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  // 400 bytes of shard and 80 bytes of replicated weight per device; y = x * 3 + w keeps one temporary
  // (x * 3) alive while the output is made, then drops it.
  auto f = pmap([](const Args& a) -> Tree { return a[0].array() * 3.0 + a[1].array(); },
                {.in_axes = Axes::tuple({0, none})});
  Tree out = f(sim, {Array::full({p, 5, 20}, 1.0), Array::full({20}, 2.0)});
  const auto call = sim.report().calls.back();
  for (const auto& memory : call.memory) {
    EXPECT_EQ(memory.peak, 400 + 80 + 400 + 400);
    EXPECT_EQ(at_peak(memory, MemoryTag::input_shards), 400);
    EXPECT_EQ(at_peak(memory, MemoryTag::replicated_args), 80);
    // At the peak both the temporary and the result exist; the result becomes an output afterwards.
    EXPECT_EQ(at_peak(memory, MemoryTag::temporaries), 800);
  }
  // After the call the inputs and the temporary are gone; the device-resident output stays.
  const auto report = sim.report();
  const auto& timeline = report.memory_timelines[0];
  EXPECT_EQ(timeline.back().in_use, 400);
  EXPECT_TRUE(std::any_of(timeline.begin(), timeline.end(), [](const MemoryEvent& e) {
    return e.tag == MemoryTag::outputs && e.delta == 400;
  }));
}

TEST(Memory, DroppingAResultReleasesItsDeviceBuffers) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  auto f = pmap([](const Args& a) -> Tree { return a[0].array() + 1.0; });
  {
    Tree out = f(sim, {Array::full({2, 100}, 1.0)});
    EXPECT_EQ(sim.report().memory_timelines[1].back().in_use, 400);
  }
  EXPECT_EQ(sim.report().memory_timelines[1].back().in_use, 0);
}

TEST(Memory, CollectiveScratchIsCounted) {
  const int p = 4;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::full({p, 1024}, 1.0)});
  const DeviceMemory memory = sim.report().calls.back().memory[0];
  // The ring's output buffer (scratch) beside the input shard; it then becomes the output.
  EXPECT_EQ(memory.peak, 4096 * 2);
  EXPECT_EQ(at_peak(memory, MemoryTag::input_shards), 4096);
  EXPECT_EQ(at_peak(memory, MemoryTag::collective_scratch), 4096);
}

// As NCCL's ring: the output is one buffer held for the whole call, the blocks in flight are staged, so a
// rank of p holds one buffer, not p pieces (pieces of unequal sizes here: 1,003 floats over 5 ranks).
TEST(Memory, ARingAllReduceHoldsOneOutputBufferNotItsPieces) {
  const int p = 5;
  const std::int64_t n = 1003;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = "ring"}); },
                {.axis_name = "i"});
  f(sim, {Array::full({p, n}, 1.0)});
  const auto report = sim.report();
  for (int d = 0; d < p; ++d) {
    EXPECT_EQ(scratch_deltas(report.memory_timelines[static_cast<std::size_t>(d)]),
              (std::vector<Bytes>{4 * n, -4 * n}))
        << "device " << d;
    EXPECT_EQ(at_peak(report.calls.back().memory[static_cast<std::size_t>(d)], MemoryTag::collective_scratch),
              4 * n);
  }
}

// So is the ring reduce-scatter: its partial sums stay staged, and only its last sum, the rank's block, is a
// buffer of its own.
TEST(Memory, ARingReduceScatterHoldsOnlyItsReducedBlock) {
  const int p = 4;
  const std::int64_t n = 1000;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        return psum_scatter(a[0].array(), "i", 0, true, {}, {.algorithm = "ring"});
      },
      {.axis_name = "i"});
  f(sim, {Array::full({p, n}, 1.0)});
  const auto report = sim.report();
  for (int d = 0; d < p; ++d) {
    EXPECT_EQ(scratch_deltas(report.memory_timelines[static_cast<std::size_t>(d)]),
              (std::vector<Bytes>{4 * n / p, -4 * n / p}))
        << "device " << d;
  }
}

// And the ring all-gather: the blocks it receives are its output, one buffer for the other ranks' blocks,
// held as long as the caller keeps them, not a buffer per block.
TEST(Memory, ARingAllGatherHoldsOneBufferForTheOtherRanksBlocks) {
  const int p = 4;
  const std::int64_t n = 250;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap(
      [](const Args& a) -> Tree { return all_gather(a[0].array(), "i", 0, true, {}, {.algorithm = "ring"}); },
      {.axis_name = "i"});
  f(sim, {Array::full({p, n}, 1.0)});
  const auto report = sim.report();
  for (int d = 0; d < p; ++d) {
    EXPECT_EQ(scratch_deltas(report.memory_timelines[static_cast<std::size_t>(d)]),
              (std::vector<Bytes>{4 * n * (p - 1), -4 * n * (p - 1)}))
        << "device " << d;
  }
}

TEST(Memory, OutOfMemoryNamesTheDeviceTheAllocationAndTheLiveBuffers) {
  auto spec = testing::round_numbers_cluster(2);
  spec.device.memory_capacity = 1000;
  Simulation sim(topologies::switch_cluster(spec));
  auto f = pmap([](const Args& a) -> Tree { return matmul(a[0].array(), a[1].array()); },
                {.in_axes = Axes::tuple({0, none})});
  // 400-byte shard + 400-byte weight fit; the 10x10 float32 product (400 bytes) does not.
  try {
    f(sim, {Array::full({2, 10, 10}, 1.0), Array::full({10, 10}, 1.0)});
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_EQ(std::string(e.python_type()), "XlaRuntimeError");
    EXPECT_NE(message.find("RESOURCE_EXHAUSTED: Out of memory on dev"), std::string::npos) << message;
    EXPECT_NE(message.find("while trying to allocate 400 B for matmul (temporaries): 800 B of 1000 B in use"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("args[0] (input_shards, 400 B)"), std::string::npos) << message;
    EXPECT_NE(message.find("args[1] (replicated_args, 400 B)"), std::string::npos) << message;
  }
}

TEST(Memory, AbstractArraysTakeTheSameMemory) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(2)));
  auto f = pmap([](const Args& a) -> Tree { return tanh(a[0].array()); });
  f(sim, {Array::full({2, 64, 64}, 1.0)});
  const auto real = sim.report().calls.back().memory;
  f(sim, {Array::abstract({2, 64, 64})});
  const auto abstract = sim.report().calls.back().memory;
  for (std::size_t d = 0; d < real.size(); ++d) {
    EXPECT_EQ(real[d].peak, abstract[d].peak);
    EXPECT_EQ(real[d].at_peak, abstract[d].at_peak);
  }
}

}  // namespace
}  // namespace spmdsim
