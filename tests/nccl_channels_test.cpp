// NCCL's channels: the channel rings are pure and cross nodes on different NICs; nccl_ring gives the ring's
// values on every collective kind for any channel count; under the pinned alpha-beta model C channels on
// one switch take the single ring's closed form, and across rail-optimised nodes they divide the NIC term
// by C (each channel crosses on its own NIC).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "collective_time.hpp"
#include "collectives/algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using testing::collective_time;

using collectives::nccl_channel_rings;

TEST(NcclChannelRings, EachChannelEntersEveryNodeAtItsOwnDeviceWithItsOwnStride) {
  // d = 4: strides 1 and 3 alternate; channel c enters each node at local device c mod 4.
  const auto shared = nccl_channel_rings({4, 2}, 4);
  const auto& rings = *shared;
  ASSERT_EQ(rings.size(), 4u);
  EXPECT_EQ(rings[0], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(rings[1], (std::vector<int>{1, 0, 3, 2, 5, 4, 7, 6}));
  EXPECT_EQ(rings[2], (std::vector<int>{2, 3, 0, 1, 6, 7, 4, 5}));
  EXPECT_EQ(rings[3], (std::vector<int>{3, 2, 1, 0, 7, 6, 5, 4}));
}

TEST(NcclChannelRings, EveryRingVisitsEveryRankOnceAndTheFirstDChannelsEnterOnDistinctDevices) {
  for (const std::vector<int>& dimensions : {std::vector<int>{8, 4}, {8}, {7, 3}, {1, 5}, {6, 2, 2}}) {
    int p = 1;
    for (int x : dimensions) p *= x;
    const auto shared = nccl_channel_rings(dimensions, 16);
    const auto& rings = *shared;
    std::set<int> entries;
    for (std::size_t c = 0; c < rings.size(); ++c) {
      std::set<int> seen(rings[c].begin(), rings[c].end());
      EXPECT_EQ(static_cast<int>(seen.size()), p);
      EXPECT_EQ(static_cast<int>(rings[c].size()), p);
      if (static_cast<int>(c) < dimensions.front()) entries.insert(rings[c].front());
    }
    EXPECT_EQ(static_cast<int>(entries.size()), dimensions.front());
  }
}

TEST(NcclChannelRings, NodeCyclesAreArcDisjointHamiltonianCycles) {
  // A decomposition into d - 1 cycles wherever one exists; d = 4 and 6 have none (Tillson 1980), and 2 and 4
  // arc-disjoint cycles are the most they hold.
  const std::map<int, std::size_t> expected{{1, 1}, {2, 1}, {3, 2},  {4, 2},  {5, 4},
                                            {6, 4}, {7, 6}, {8, 7}, {9, 8}, {16, 15}};
  for (auto [d, count] : expected) {
    const auto& cycles = collectives::node_cycles(d);
    EXPECT_EQ(cycles.size(), count) << d;
    std::set<std::pair<int, int>> arcs;
    for (const auto& cycle : cycles) {
      EXPECT_EQ(std::set<int>(cycle.begin(), cycle.end()).size(), static_cast<std::size_t>(d));
      for (int i = 0; i < d && d > 1; ++i)
        EXPECT_TRUE(
            arcs.insert({cycle[static_cast<std::size_t>(i)], cycle[static_cast<std::size_t>((i + 1) % d)]})
                .second)
            << "d " << d << ": an arc used twice";
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Values: every kind, real data, channel counts that do and do not divide the pieces

Tree run(Simulation& sim, const Array& x, std::function<Array(const Array&)> f) {
  auto g = pmap([f](const Args& a) -> Tree { return f(a[0].array()); }, {.axis_name = "i"});
  return g(sim, {x});
}

Array rows(int p, std::int64_t n) {
  std::vector<double> values;
  for (int i = 0; i < p; ++i)
    for (std::int64_t j = 0; j < n; ++j) values.push_back((i + 1) * 1000.0 + j);
  return Array::from_values(Shape{p, n}, values);
}

class NcclRingValues : public ::testing::TestWithParam<int> {};

TEST_P(NcclRingValues, AreTheRingsValues) {
  const int channels = GetParam();
  constexpr int p = 6;
  constexpr std::int64_t n = 30;
  const Array x = rows(p, n);
  const CollectiveOptions nccl{.algorithm = "nccl_ring", .channels = channels};
  const CollectiveOptions ring{.algorithm = "ring"};
  auto values = [&](const CollectiveOptions& options) {
    Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(p)));
    std::vector<Array> out;
    out.push_back(
        sim.device_get(run(sim, x, [&](const Array& v) { return psum(v, "i", {}, options); })).leaf());
    out.push_back(
        sim.device_get(run(sim, x, [&](const Array& v) { return pmax(v, "i", {}, options); })).leaf());
    out.push_back(
        sim.device_get(run(sim, x, [&](const Array& v) { return all_gather(v, "i", 0, false, {}, options); }))
            .leaf());
    out.push_back(
        sim.device_get(
               run(sim, x, [&](const Array& v) { return psum_scatter(v, "i", 0, true, {}, options); }))
            .leaf());
    return out;
  };
  const auto expected = values(ring);
  const auto actual = values(nccl);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].shape(), expected[i].shape()) << i;
    EXPECT_EQ(actual[i].to_doubles(), expected[i].to_doubles()) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Channels, NcclRingValues, ::testing::Values(1, 2, 4, 7, 64));

TEST(NcclRingOptions, NegativeChannelsAreRefused) {
  Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(2)));
  try {
    run(sim, rows(2, 4),
        [](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring", .channels = -1}); });
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "channels must be at least 1, or 0 for the simulation's (got -1)");
  }
}

// ---------------------------------------------------------------------------------------------------------
// Times under the pinned alpha-beta model

void expect_close(double actual, double expected, double relative) {
  EXPECT_NEAR(actual, expected, relative * expected) << "actual " << actual << " expected " << expected;
}

// Elements per device: divisible by every p * C used below, so that every piece has one size.
constexpr std::int64_t kFloats = 8 * 9 * 5 * 7 * 1024;

// One simulation per process: each channel count is a test of its own.
class NcclRingTime : public ::testing::TestWithParam<int> {};

TEST_P(NcclRingTime, ChannelsOnOneSwitchTakeTheRingsClosedForm) {
  constexpr int p = 8;
  const int channels = GetParam();
  const CostInputs c{.p = p, .n = 4.0 * kFloats, .alpha = 2e-6, .beta = 1.0 / 100e9};
  Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(p)), {alpha_beta_config(), {}});
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32),
      [&](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring", .channels = channels}); });
  expect_close(collective_time(sim, "psum"), collectives::ring_all_reduce_cost(c), 1e-9);
}

TEST_P(NcclRingTime, BookedPhasesOnOneSwitchTakeTheSameClosedForm) {
  constexpr int p = 8;
  const int channels = GetParam();
  const CostInputs c{.p = p, .n = 4.0 * kFloats, .alpha = 2e-6, .beta = 1.0 / 100e9};
  SimulationOptions options{alpha_beta_config(), {}};
  options.aggregate_ring_phases = true;  // each channel books its own phases
  Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(p)), options);
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32),
      [&](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring", .channels = channels}); });
  expect_close(collective_time(sim, "psum"), collectives::ring_all_reduce_cost(c), 1e-9);
}

// Two nodes of four devices, a fabric so fast that only its latency counts, NICs of 25 GB/s and 1 us:
// every ring step waits for its node-crossing hop (fabric 0 s, NIC up and down 1 us each), whose piece of
// n / (C p) bytes crosses one NIC, channel c's own.
topologies::MultiNodeSpec two_rail_nodes() {
  topologies::NodeSpec node;
  node.devices_per_node = 4;
  node.device = testing::free_compute_cluster(1).device;
  node.device_link = {1e18, 0};
  node.host_link = {10e9, 1e-6};
  node.nic = {25e9, 1e-6};
  topologies::MultiNodeSpec spec;
  spec.node = node;
  spec.num_nodes = 2;
  return spec;
}

TEST_P(NcclRingTime, ChannelsAcrossRailNodesEachCrossOnTheirOwnNic) {
  constexpr int p = 8;
  const int channels = GetParam();
  const double bytes = 4.0 * kFloats;
  Simulation sim(topologies::multi_node_cluster(two_rail_nodes()), {alpha_beta_config(), {}});
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32),
      [&](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring", .channels = channels}); });
  // Beyond one channel per NIC (4), channels share NICs: the NIC term stays at n / (4 p).
  const double step = 2e-6 + bytes / (std::min(channels, 4) * p) / 25e9;
  expect_close(collective_time(sim, "psum"), 2 * (p - 1) * step, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Channels, NcclRingTime, ::testing::Values(1, 2, 4, 8));

// One full-mesh node of p devices, pair links of 100 GB/s and 1 us.
PlatformBuilder full_mesh_node(int p) {
  topologies::NodeSpec node;
  node.devices_per_node = p;
  node.device = testing::free_compute_cluster(1).device;
  node.fabric = topologies::NodeFabric::full_mesh;
  node.device_link = {100e9, 1e-6};
  node.host_link = {10e9, 1e-6};
  node.nic = {25e9, 1e-6};
  return topologies::accelerator_node(node);
}

// On 8 devices each of the first 6 channels walks its own cycle of pair links, so 6 channels divide the
// bandwidth term by 6; one channel is the ring.
class NcclRingMesh : public ::testing::TestWithParam<int> {};

TEST_P(NcclRingMesh, ChannelsOnAFullMeshDriveDisjointLinks) {
  constexpr int p = 8;
  const int channels = GetParam();
  Simulation sim(full_mesh_node(p), {alpha_beta_config(), {}});
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32),
      [&](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring", .channels = channels}); });
  expect_close(collective_time(sim, "psum"), 2 * (p - 1) * (1e-6 + 4.0 * kFloats / (channels * p) / 100e9),
               1e-9);
}

INSTANTIATE_TEST_SUITE_P(Channels, NcclRingMesh, ::testing::Values(1, 2, 7));

TEST(NcclRingMesh, AMeshNodeHasOneChannelPerDisjointCycle) {
  EXPECT_EQ(mesh_ring_channels(8), 7);
  EXPECT_EQ(mesh_ring_channels(4), 2);  // K4 has no decomposition into 3 Hamiltonian cycles
  EXPECT_EQ(mesh_ring_channels(6), 4);  // nor K6 into 5
  EXPECT_EQ(mesh_ring_channels(2), 1);
  EXPECT_EQ(mesh_ring_channels(1024), 64);  // stride cycles, capped at NCCL's MAXCHANNELS
  // Across nodes, as many channels on every NIC and every cycle: lcm(8, 7) = 56, lcm(4, 2) = 4; 16 devices
  // (15 cycles, lcm 240) keep one per NIC.
  EXPECT_EQ(mesh_ring_channels(8, 2), 56);
  EXPECT_EQ(mesh_ring_channels(4, 3), 4);
  EXPECT_EQ(mesh_ring_channels(16, 2), 16);
}

// With no algorithm named, a full-mesh node runs its reductions and gathers as nccl_ring on every disjoint
// cycle (as RCCL spreads its channels over all xGMI links); the other collectives keep their defaults.
TEST(NcclRingDefault, OnAFullMeshNodeIsNcclRingOnEveryDisjointCycle) {
  constexpr auto kMesh = CollectiveLibrary::mesh_channel_rings;
  EXPECT_EQ(default_algorithm(CollectiveKind::all_reduce, kMesh), "nccl_ring");
  EXPECT_EQ(default_algorithm(CollectiveKind::reduce_scatter, kMesh), "nccl_ring");
  EXPECT_EQ(default_algorithm(CollectiveKind::all_to_all, kMesh), "pairwise");
  constexpr int p = 8;
  Simulation sim(full_mesh_node(p), {alpha_beta_config(), {}});
  EXPECT_EQ(collective_library(sim.platform()), CollectiveLibrary::mesh_channel_rings);
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32), [](const Array& v) { return psum(v, "i"); });
  expect_close(collective_time(sim, "psum"), 2 * (p - 1) * (1e-6 + 4.0 * kFloats / (7 * p) / 100e9), 1e-9);
}

TEST(NcclRingDefault, IsOneChannelPerDeviceOfANode) {
  constexpr int p = 8;
  const double bytes = 4.0 * kFloats;
  Simulation sim(topologies::multi_node_cluster(two_rail_nodes()), {alpha_beta_config(), {}});
  run(sim, Array::abstract(Shape{p, kFloats}, DType::f32),
      [&](const Array& v) { return psum(v, "i", {}, {.algorithm = "nccl_ring"}); });
  expect_close(collective_time(sim, "psum"), 2 * (p - 1) * (2e-6 + bytes / (4 * p) / 25e9), 1e-6);
}

}  // namespace
}  // namespace spmdsim
