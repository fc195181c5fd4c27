// NCCL's protocols in nccl_ring: the pure choices (the tuner's protocol by size, the channels a size earns,
// the protocol names), and, under the pinned alpha-beta model on a node carrying NCCL's figures, each
// protocol's closed form: its base latency, then 2(p-1) steps of its overhead and its chunk paced at the
// channel's rate, with its wire bytes on the links; values equal the ring's on every protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "collectives/nccl_protocols.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "collective_time.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using collectives::NcclProtocol;

constexpr double kGB = 1e9;

// NCCL 2.30.7's Hopper figures for an 8-GPU node (topologies/src/presets.cpp), with NICs of 25 GB/s.
NcclNode hopper() {
  return {.ring_channels = 24,
          .graph_channels = 12,
          .graph_bandwidth = 30 * kGB,
          .ll_max_bandwidth = {141 * kGB, 39 * kGB, 20.4 * kGB},
          .ll128_graph_channel_bandwidth = 36.7 * kGB,
          .net_bandwidth = 8 * 25 * kGB,
          .source = "test"};
}

TEST(NcclTuner, PicksLLThenLL128ThenSimpleAsTheAllReduceGrows) {
  // Ring on 8 H100s: LL (15.0 us + S / 80.6 GB/s), LL128 (40.6 us + S / 189.3), Simple (56 us + S / 205.7);
  // LL128 overtakes LL near 3.6 MB, Simple overtakes LL128 near 35 MB.
  const auto pick = [](double bytes) {
    return collectives::nccl_tuner_protocol(hopper(), CollectiveKind::all_reduce, 8, 1, bytes);
  };
  EXPECT_EQ(pick(32 * 1024.0), NcclProtocol::ll);
  EXPECT_EQ(pick(1024 * 1024.0), NcclProtocol::ll);
  EXPECT_EQ(pick(16 * 1024 * 1024.0), NcclProtocol::ll128);
  EXPECT_EQ(pick(256 * 1024 * 1024.0), NcclProtocol::simple);
  EXPECT_NEAR(
      collectives::nccl_ring_tuner_time(hopper(), NcclProtocol::simple, CollectiveKind::all_reduce, 8, 1, 0),
      56e-6, 1e-12);
}

// Across nodes NCCL's tuner counts a Simple ring all-reduce's latency 1.4 times once it carries at least 64
// bytes per channel and rank (tuning.cc's "plateau effect of ring"): 2 x 8 H100s, 30 steps of which 2 cross
// nodes, 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us; 1 GiB moves at 360 GB/s x 16 / 30.
TEST(NcclTuner, AMultiNodeSimpleRingCountsItsLatencyOnePointFourTimes) {
  const auto time = [](double bytes) {
    return collectives::nccl_ring_tuner_time(hopper(), NcclProtocol::simple, CollectiveKind::all_reduce, 16, 2,
                                             bytes);
  };
  EXPECT_NEAR(time(0), 131.6e-6, 1e-12);
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_NEAR(time(gib) - gib / (360 * kGB * 16 / 30), 1.4 * 131.6e-6, 1e-12);
  // One node: no such factor.
  EXPECT_NEAR(collectives::nccl_ring_tuner_time(hopper(), NcclProtocol::simple, CollectiveKind::all_reduce, 8, 1,
                                                gib) -
                  gib / (360 * kGB * 8 / 14),
              56e-6, 1e-12);
}

TEST(NcclRingFill, IsWhatTheSlicesHideOfEachStepOnTheDataPathOnce) {
  const ChannelProtocol simple{.rate = 10 * kGB, .step_overhead = 2.8e-6, .step_overhead_across = 11.3e-6,
                               .slices = 2};
  // 2 nodes of 8: 30 steps, 2 of them across. A 2 MiB step hides more than either overhead (105 us).
  EXPECT_NEAR(collectives::nccl_ring_fill(simple, CollectiveKind::all_reduce, {8, 2}, 2.0 * 1024 * 1024),
              28 * 2.8e-6 + 2 * 11.3e-6, 1e-15);
  // An 8 KiB step hides 0.41 us of each; the all-gather's path is 15 steps.
  EXPECT_NEAR(collectives::nccl_ring_fill(simple, CollectiveKind::all_gather, {8, 2}, 8192),
              15 * 4096 / (10 * kGB), 1e-15);
  // Without slices (LL, LL128) nothing is hidden, so nothing is left to fill.
  const ChannelProtocol ll128{.rate = 10 * kGB, .step_overhead = 1.3e-6};
  EXPECT_EQ(collectives::nccl_ring_fill(ll128, CollectiveKind::all_reduce, {8}, 1e6), 0);
}

TEST(NcclTuner, BusBandwidthsFollowTheTunersRefinements) {
  const NcclNode node = hopper();
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::simple, 8, 1), 360 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::ll, 8, 1), 141 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::ll, 8, 2), 39 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::ll128, 8, 1), 0.92 * 360 * kGB);
  // A node without NCCL's search speeds across nodes keeps its graph; past two nodes the tuner reads bwInter,
  // here the NICs' 200 GB/s over its 12 channels.
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::simple, 8, 2), 360 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::simple, 8, 4), 8 * 25 * kGB);
}

TEST(NcclTuner, AcrossNodesTheRingRunsNcclsGraphAcrossNodes) {
  // 8 x 400 Gb/s NICs: 8 graph channels of 48 GB/s, whatever the node count; LL128 capped per graph channel.
  const NcclNode node = *topologies::platform_nccl(topologies::node_preset("dgx_h100").spec());
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::simple, 8, 2), 8 * 48 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::simple, 8, 4), 8 * 48 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_ring_bus_bandwidth(node, NcclProtocol::ll128, 8, 2),
                   std::min(0.92 * 384, 8 * 36.7) * kGB);
}

TEST(NcclChannels, ACallEarnsAChannelPerThreadsTimesThreshold) {
  // Simple: 512 threads x 64 bytes = 32 KiB per channel; LL on 8 ranks: 512 x 8 x 8 = 32 KiB; LL128: 640 x 8.
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::simple, 8, 8, 24), 1);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::simple, 8, 64 * 1024.0, 24), 2);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::simple, 8, 64 * 1024.0 - 1, 24), 1);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::ll, 8, 128 * 1024.0, 24), 4);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::ll, 2, 128 * 1024.0, 24), 16);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::ll128, 8, 50 * 1024.0, 24), 10);
  EXPECT_EQ(collectives::nccl_call_channels(NcclProtocol::simple, 8, 1e12, 24), 24);
}

TEST(NcclProtocolNames, AreNcclProtosAndAnOtherNameListsThem) {
  for (NcclProtocol protocol : collectives::kNcclProtocols)
    EXPECT_EQ(collectives::parse_nccl_protocol(collectives::nccl_protocol_name(protocol)), protocol);
  try {
    (void)collectives::parse_nccl_protocol("ll");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown NCCL protocol 'll'; valid: LL, LL128, Simple (or none: the tuner's)");
  }
}

// ---------------------------------------------------------------------------------------------------------
// Times under the pinned alpha-beta model: one node of 4 devices on a switch of 100 GB/s and 1 us per hop,
// NCCL's figures of 2 ring channels over one graph channel of 20 GB/s (each channel 10 GB/s with Simple,
// LL 10 / 2 = 5 GB/s of data), so that a channel's rate, not the links, sets every step.

topologies::NodeSpec paced_node() {
  topologies::NodeSpec node;
  node.devices_per_node = 4;
  node.device = testing::free_compute_cluster(1).device;
  node.device_link = {100 * kGB, 1e-6};
  node.host_link = {10 * kGB, 1e-6};
  node.nic = {25 * kGB, 1e-6};
  node.nccl = NcclNode{.ring_channels = 2,
                       .graph_channels = 1,
                       .graph_bandwidth = 20 * kGB,
                       .ll_max_bandwidth = {87.7 * kGB, 22.5 * kGB, 19 * kGB},
                       .ll128_graph_channel_bandwidth = 20 * kGB,
                       .source = "test"};
  return node;
}

constexpr int kDevices = 4;
constexpr std::int64_t kFloats = 256 * 1024;  // 1 MiB per device: 2 channels, one pass, 128 KiB per step

double psum_time(const std::string& protocol, std::int64_t floats = kFloats) {
  Simulation sim(topologies::accelerator_node(paced_node()), {alpha_beta_config(), {}});
  auto f = pmap(
      [&](const Args& a) -> Tree {
        return psum(a[0].array(), "i", {}, {.algorithm = "nccl_ring", .protocol = protocol});
      },
      {.axis_name = "i"});
  f(sim, {Array::abstract(Shape{kDevices, floats}, DType::f32)});
  return testing::collective_time(sim, "psum");
}

// One simulation per process: each protocol is a test of its own. Simple moves each step's chunk in 2 slices,
// forwarded as they arrive, so a step takes a slice's pace plus the longer of the other slice's pace and its
// latency: its overhead over the route's (3.4 - 0.6 us) shows only where it exceeds half the step's pace. The
// first pass has nothing in flight to hide it behind: the call waits what it hides there once, at the start
// (nccl_ring_fill), so the first pass pays every step's overhead whole.
TEST(NcclProtocolTime, SimplePaysItsFirstPassOverheadsWholeThenStepsAtTheChannelsRate) {
  const double step_bytes = 4.0 * kFloats / 2 / kDevices;  // 128 KiB: half of it paced in 6.6 us
  EXPECT_NEAR(psum_time("Simple"), 8.4e-6 + 2 * (kDevices - 1) * (2.8e-6 + step_bytes / (10 * kGB)), 1e-12);
}

TEST(NcclProtocolTime, SimpleHidesTheOverheadsOfThePassesAfterTheFirst) {
  constexpr std::int64_t floats = 8 * 1024 * 1024;  // 32 MiB a device: 2 channels, two passes of 2 MiB steps
  const double step_bytes = 2.0 * 1024 * 1024;
  EXPECT_NEAR(psum_time("Simple", floats),
              8.4e-6 + 2 * (kDevices - 1) * 2.8e-6 + 2 * 2 * (kDevices - 1) * step_bytes / (10 * kGB), 1e-12);
}

TEST(NcclProtocolTime, SimpleShowsTheOverheadItsSecondSliceDoesNotHide) {
  constexpr std::int64_t floats = 32 * 1024;            // 128 KiB per device: 2 channels, one pass
  const double step_bytes = 4.0 * floats / 2 / kDevices;  // 16 KiB: half of it paced in 0.82 us
  // The route is slower than the pace: two 1 us hops, and the 2 channels' 16 KiB share each 100 GB/s port;
  // the only pass pays the overhead whole.
  const double step = (3.4e-6 - 0.6e-6) + 2e-6 + 2 * step_bytes / (100 * kGB);
  EXPECT_NEAR(psum_time("Simple", floats), 8.4e-6 + 2 * (kDevices - 1) * step, 1e-12);
}

TEST(NcclProtocolTime, LLPutsTwiceTheBytesOnTheWireAtHalfTheRate) {
  const double step_bytes = 4.0 * kFloats / 2 / kDevices;
  const double step = step_bytes / (5 * kGB);  // LL adds no overhead to the route's latency
  EXPECT_NEAR(psum_time("LL"), 6.6e-6 + 2 * (kDevices - 1) * step, 1e-12);
}

TEST(NcclProtocolValues, EveryProtocolGivesTheRingsSum) {
  Simulation sim(topologies::accelerator_node(paced_node()));
  std::vector<double> values;
  for (int i = 0; i < kDevices; ++i)
    for (int j = 0; j < 3000; ++j) values.push_back(i + j * 0.5);
  const Array x = Array::from_values(Shape{kDevices, 3000}, values);
  Tree out;
  for (const std::string protocol : {"LL", "LL128", "Simple"}) {
    auto f = pmap(
        [&](const Args& a) -> Tree {
          return psum(a[0].array(), "i", {}, {.algorithm = "nccl_ring", .protocol = protocol});
        },
        {.axis_name = "i"});
    out = f(sim, {x});
    const Array host = sim.device_get(out).leaf();
    for (int j = 0; j < 3000; ++j)
      EXPECT_DOUBLE_EQ(host.item((kDevices - 1) * 3000 + j), 6.0 + 4 * j * 0.5)
          << protocol << " element " << j;
  }
}

TEST(NcclProtocolOptions, AnUnknownProtocolIsRefusedWithTheValidOnes) {
  Simulation sim(topologies::accelerator_node(paced_node()));
  auto f = pmap(
      [](const Args& a) -> Tree {
        return psum(a[0].array(), "i", {}, {.algorithm = "nccl_ring", .protocol = "LL64"});
      },
      {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({kDevices, 4})});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "unknown NCCL protocol 'LL64'; valid: LL, LL128, Simple (or none: the tuner's)");
  }
}

TEST(NcclProtocolOptions, AnUnknownSimulationProtocolIsRefusedBeforeTheRun) {
  SimulationOptions options;
  options.protocol = "simple";
  EXPECT_THROW(Simulation(topologies::accelerator_node(paced_node()), options), ValueError);
}

}  // namespace
}  // namespace spmdsim
