// NCCL's Tree: the tuner's figures NCCL 2.30.7 gives it (latency, bus bandwidth per protocol, the correction
// per size, the channels a call earns), the exchanges of the chains and the double binary tree of the nodes,
// where `nccl` picks it, and, under the pinned alpha-beta model, its closed forms (the tuner's latency, then
// the larger of its pace and its exchanges), its values (the ranks' arrays summed in rank order) and its
// refusal without NCCL's figures.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_tree.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "collective_time.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;
using collectives::NcclProtocol;

// Hopper's figures as a multi-node platform carries them: 8 NICs of 400 Gb/s, 47 GB/s through NCCL.
NcclNode hopper() { return *topologies::platform_nccl(topologies::node_preset("hgx_h200").spec()); }

TEST(NcclTreeTuner, LatencyIsTheBaseThenTheChainAndTheTreeBothWays) {
  EXPECT_NEAR(collectives::nccl_tree_latency(NcclProtocol::ll, 16, 2), (6.8 + 2 * (7 * 0.6 + 1 * 5.0)) * 1e-6, 1e-12);
  EXPECT_NEAR(collectives::nccl_tree_latency(NcclProtocol::simple, 32, 4), (8.4 + 2 * (7 * 4.0 + 2 * 14.0)) * 1e-6,
              1e-12);
  EXPECT_NEAR(collectives::nccl_tree_latency(NcclProtocol::ll128, 8, 1), (14.0 + 2 * 7 * 1.25) * 1e-6, 1e-12);
}

TEST(NcclTreeTuner, BusBandwidthPerProtocolIsTheGraphsCappedPerChannel) {
  const NcclNode h = hopper();
  // Across nodes the tree graph: 8 channels of 48 GB/s (nccl_net_graph.hpp).
  const double simple = std::min(0.92 * 8 * 48, 8 * 41.4);  // 331.2
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_bus_bandwidth(h, NcclProtocol::simple, 8, 2), simple * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_bus_bandwidth(h, NcclProtocol::ll, 8, 2), std::min(simple / 3.8, 39.0) * kGB);  // llMaxBw across 2 nodes of Intel hosts
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_bus_bandwidth(h, NcclProtocol::ll128, 8, 2),
                   std::min(simple * 120 / 128, 8 * 36.7) * kGB);
  // One node: the node's graph (12 x 30 GB/s), LL128 at 7/9; four nodes: bwInter, capped per channel.
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_bus_bandwidth(h, NcclProtocol::ll128, 8, 1),
                   std::min(std::min(0.92 * 360, 12 * 38.7) * 7 / 9, 12 * 36.7) * kGB);
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_bus_bandwidth(h, NcclProtocol::simple, 8, 4), std::min(0.92 * 8 * 48, 8 * 36.0) * kGB);
}

TEST(NcclTreeTuner, CorrectionPerSizeIsNcclsTableBelowItsLastSize) {
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::simple, 1 * kMiB, 23), 0.5);   // class 14
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::ll, 32 * 1024, 23), 0.7);      // class 9
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::ll128, 64 * kMiB, 23), 0.9);   // class 20
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::simple, 512 * kMiB, 23), 1.0);  // class 23
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::simple, 512 * kMiB, 24), 0.9);
  EXPECT_DOUBLE_EQ(collectives::nccl_tree_correction(NcclProtocol::simple, 32, 23), 1.0);
  // The tuner's time: latency + bytes / (busbw / 2 x correction).
  const NcclNode h = hopper();
  EXPECT_NEAR(collectives::nccl_tree_tuner_time(h, NcclProtocol::simple, 16, 2, kMiB),
              collectives::nccl_tree_latency(NcclProtocol::simple, 16, 2) + kMiB / (331.2 * kGB / 2 * 0.5), 1e-12);
}

TEST(NcclTreeTuner, ChannelsFallWhileTheCallHasFewerBytesThanThreadsTimesThreshold) {
  EXPECT_EQ(collectives::nccl_tree_call_channels(NcclProtocol::ll, 32 * 1024, 24), 8);  // 32 KiB / (512 x 8)
  EXPECT_EQ(collectives::nccl_tree_call_channels(NcclProtocol::simple, 1 * kMiB, 24), 24);
  EXPECT_EQ(collectives::nccl_tree_call_channels(NcclProtocol::simple, 64 * 1024, 24), 2);
  EXPECT_EQ(collectives::nccl_tree_call_channels(NcclProtocol::ll128, 100, 24), 1);
}

TEST(NcclTreeExchanges, MatchPairwiseAndMoveEachChannelsShareOverEveryChainLinkAndTreeEdge) {
  for (auto [local, nodes] : {std::pair{8, 2}, {4, 4}, {1, 5}, {3, 7}}) {
    const double bytes = 4800;
    const int channels = 6;
    std::map<std::pair<int, int>, double> sent, received;
    double total = 0;
    for (int r = 0; r < local * nodes; ++r)
      for (const auto& x : collectives::nccl_tree_exchanges(local, nodes, r, bytes, channels)) {
        EXPECT_NE(x.peer, r);
        sent[{r, x.peer}] += x.sends;
        received[{x.peer, r}] += x.receives;
        total += x.sends;
      }
    EXPECT_EQ(sent, received) << local << " x " << nodes;
    // Each of 2 trees x `channels` carries bytes / (2 channels) both ways over (local - 1) x nodes chain links
    // and nodes - 1 tree edges.
    EXPECT_NEAR(total, 2 * bytes * ((local - 1) * nodes + nodes - 1), 1e-9) << local << " x " << nodes;
  }
}

TEST(NcclTreeExchanges, OnTwoSingleDeviceNodesAreTheWholeVectorEachWay) {
  const auto e = collectives::nccl_tree_exchanges(1, 2, 0, 4096, 3);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].peer, 1);
  EXPECT_DOUBLE_EQ(e[0].sends, 4096);
  EXPECT_DOUBLE_EQ(e[0].receives, 4096);
}

NcclChoice choose(const NcclNode& node, double bytes, std::vector<int> shape, bool switches_reduce = true) {
  const int ranks = shape[0] * shape[1];
  return nccl_choice(node, "nccl", CollectiveKind::all_reduce, shape, static_cast<std::int64_t>(bytes / 4 / ranks),
                     4, 24, "", switches_reduce);
}

TEST(NcclChoice, AcrossNodesIsTreeForSmallAllReducesAndNvlsTreeForLargeOnes) {
  const auto small = choose(hopper(), 32 * 1024, {8, 2});
  EXPECT_EQ(small.algorithm, "Tree");
  EXPECT_EQ(small.protocol, "LL");
  EXPECT_EQ(small.channels, 8);
  EXPECT_EQ(choose(hopper(), 1 * kMiB, {8, 4}).algorithm, "Tree");
  EXPECT_EQ(choose(hopper(), 256 * kMiB, {8, 4}).algorithm, "NVLSTree");
  // From 1 GiB on 4 nodes the ring's graph across nodes (8 x 48 GB/s) outpaces NVLSTree's (8 x 45.5).
  EXPECT_EQ(choose(hopper(), 4096 * kMiB, {8, 4}).algorithm, "Ring");
  // Without NVLS (A100) a small all-reduce across nodes is Tree too; inside one H200 node it stays Ring LL.
  NcclNode ampere = *topologies::node_preset("dgx_a100").nccl;
  ampere.net_bandwidth = 8 * 23.5 * kGB;
  EXPECT_EQ(choose(ampere, 32 * 1024, {8, 2}, false).algorithm, "Tree");
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_reduce, {8}, 1024, 4, 24, "", true).algorithm, "Ring");
  // Gathers never run Tree.
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_gather, {8, 2}, 1024, 4, 24, "", true).algorithm, "Ring");
}

// ---------------------------------------------------------------------------------------------------------
// Under the pinned model: nodes of `local` devices on 1000 GB/s switch ports, NICs of `nic` B/s, 1 us per
// link, Hopper's NCCL figures; Simple forced.

Simulation tree_cluster(int local, int nodes, double nic) {
  topologies::NodeSpec node;
  node.devices_per_node = local;
  node.device = testing::free_compute_cluster(1).device;
  node.device_link = {1000 * kGB, 1e-6};
  node.host_link = {10 * kGB, 1e-6};
  node.nic = {nic, 1e-6};
  node.nccl = *topologies::node_preset("dgx_a100").nccl;  // no NVLS: nothing but the tree
  return Simulation(topologies::multi_node_cluster({.node = node, .num_nodes = nodes}), {alpha_beta_config(), {}});
}

double psum_time(Simulation& sim, const Array& x, const std::string& algorithm = "nccl_tree") {
  auto f = pmap([&](const Args& a) -> Tree {
    return psum(a[0].array(), "i", {}, {.algorithm = algorithm, .protocol = "Simple"});
  },
                {.axis_name = "i"});
  f(sim, {x});
  return testing::collective_time(sim, "psum");
}

constexpr std::int64_t kFloats = 256 * 1024;  // 1 MiB per device

TEST(NcclTreeTime, WithFastLinksIsTheLatencyThenTheTunersPace) {
  Simulation sim = tree_cluster(4, 2, 1000 * kGB);
  // Ampere, 2 nodes of 4 GPUs: the tree graph across nodes is one channel per NIC at 48 GB/s (the NICs carry
  // more; the NVLink forwards 3 x 48 of 240), busbw min(0.92 x 4 x 48, 4 x 23.6) = 94.4 GB/s, algbw half of
  // it x 0.5 (1 MiB, class 14), on all 8 channels.
  const double algbw = 94.4 * kGB / 2 * 0.5;
  const double latency = (8.4 + 2 * (3 * 4.0 + 1 * 14.0)) * 1e-6;
  EXPECT_NEAR(psum_time(sim, Array::abstract(Shape{8, kFloats}, DType::f32)), latency + kMiB / algbw, 1e-9);
}

TEST(NcclTreeTime, WithSlowNicsIsTheLatencyThenTheWholeVectorOverTheNic) {
  // One device per node: each sends its whole vector to the other over NIC up, NIC down (1 us each).
  Simulation sim = tree_cluster(1, 2, 10 * kGB);
  const double latency = (8.4 + 2 * 14.0) * 1e-6;
  EXPECT_NEAR(psum_time(sim, Array::abstract(Shape{2, kFloats}, DType::f32)), latency + 2e-6 + kMiB / (10 * kGB),
              1e-9);
}

TEST(NcclTreeValues, AreTheRanksArraysSummedInRankOrderAsNcclPicksIt) {
  Simulation sim = tree_cluster(4, 2, 25 * kGB);
  std::vector<double> values;
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 3000; ++j) values.push_back(static_cast<float>(r + 1) * 0.1f + static_cast<float>(j));
  const Array x = Array::from_values(Shape{8, 3000}, values);
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = "nccl"}); },
                {.axis_name = "i"});
  const auto got = sim.device_get(f(sim, {x})).leaf().to_doubles();
  for (int j = 0; j < 3000; ++j) {
    float sum = 0.1f + static_cast<float>(j);
    for (int r = 1; r < 8; ++r) sum = sum + (static_cast<float>(r + 1) * 0.1f + static_cast<float>(j));
    for (int d = 0; d < 8; ++d)
      ASSERT_EQ(got[static_cast<std::size_t>(d * 3000 + j)], static_cast<double>(sum)) << "device " << d;
  }
  // 12 KB per device, across 2 nodes: NCCL's tuner picks Tree, so `nccl` ran it.
  EXPECT_NEAR(psum_time(sim, Array::abstract(x.shape(), DType::f32), "nccl"),
              psum_time(sim, Array::abstract(x.shape(), DType::f32), "nccl_tree"), 1e-12);
}

TEST(NcclTreeRefusal, WithoutNcclsFiguresNamesWhereItRuns) {
  Simulation sim(topologies::switch_cluster(testing::free_compute_cluster(4)));
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = "nccl_tree"}); },
                {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({4, 8})});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "all_reduce algorithm 'nccl_tree' runs NCCL's Tree on NCCL's figures, which only the NVIDIA "
                 "node presets carry (dgx_a100, dgx_h100, hgx_h200, dgx_b200, one node or --nodes)");
  }
}

}  // namespace
}  // namespace spmdsim
