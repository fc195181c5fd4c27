// NVLS (NVLink SHARP), NVLSTree and `nccl`: the NVLS graphs and tuner figures NCCL 2.30.7 derives for Hopper
// and Blackwell nodes, one node and several; the choice NCCL's tuner makes between Ring, NVLS and NVLSTree,
// against the one NCCL_DEBUG printed on 8 H200s; NVLSTree's exchanges across nodes (NCCL's double binary tree
// of the nodes); and, under the pinned alpha-beta model, the closed forms (the latency, then each device's
// port carrying (local + 1) / local of the vector each way and its NIC the tree's share, at most at the
// tuner's rate), the values (the ranks' arrays summed in rank order) and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "collectives/selection.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "collective_time.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr double kGB = 1e9;

const NcclNode& hopper() { return *topologies::node_preset("hgx_h200").nccl; }
const NcclNode& blackwell() { return *topologies::node_preset("dgx_b200").nccl; }

TEST(NcclGraph, IsWhatNcclsSearchFindsOnHopperAndBlackwell) {
  // Hopper: 9 x 40 <= 370.8 < 9 x 50, then bwInter raised to 60 (the fastest speed); Blackwell: 9 x 80 <=
  // 721.8, bwInter 90.
  const auto h = collectives::nvls_graph(hopper(), 8);
  EXPECT_EQ(h.channels, 8);
  EXPECT_DOUBLE_EQ(h.intra, 40 * kGB);
  EXPECT_DOUBLE_EQ(h.inter, 60 * kGB);
  const auto b = collectives::nvls_graph(blackwell(), 8);
  EXPECT_DOUBLE_EQ(b.intra, 80 * kGB);
  EXPECT_DOUBLE_EQ(b.inter, 90 * kGB);
  // Four GPUs: 5 x 60 fits, and 60 is the fastest speed.
  const auto four = collectives::nvls_graph(hopper(), 4);
  EXPECT_DOUBLE_EQ(four.intra, 60 * kGB);
  EXPECT_DOUBLE_EQ(four.inter, 60 * kGB);
}

TEST(NvlsTuner, BusBandwidthIsChannelsTimesTheSmallerOfTheEfficientIntraAndTheInter) {
  EXPECT_DOUBLE_EQ(collectives::nvls_bus_bandwidth(hopper(), 8), 8 * std::min(40 * 0.85 * 7 / 8 * 2, 60.0) * kGB);
  EXPECT_DOUBLE_EQ(collectives::nvls_bus_bandwidth(blackwell(), 8), 8 * 90 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nvls_bus_bandwidth(hopper(), 4), 4 * 60 * kGB);
  EXPECT_DOUBLE_EQ(collectives::nvls_tuner_time(hopper(), 8, 0), 25e-6);
  EXPECT_FALSE(collectives::has_nvls(*topologies::node_preset("dgx_a100").nccl));
}

NcclChoice h200_all_reduce(double bytes, const std::string& protocol = "") {
  return nccl_choice(hopper(), "nccl", CollectiveKind::all_reduce, {8}, static_cast<std::int64_t>(bytes / 32), 4,
                     24, protocol, true);
}

// stas00/ml-engineering@744d01e1 network/benchmarks/results/all-reduce-8xH200.md (NCCL_DEBUG=INFO): Ring LL up
// to 1 MiB, NVLS Simple from 2 MiB.
TEST(NcclChoice, OnEightH200sIsRingLLUpToOneMiBThenNVLSAsNcclDebugPrinted) {
  for (double mib : {0.03125, 0.25, 1.0}) {
    const auto c = h200_all_reduce(mib * 1024 * 1024);
    EXPECT_EQ(c.algorithm, "Ring") << mib << " MiB";
    EXPECT_EQ(c.protocol, "LL") << mib << " MiB";
  }
  for (double mib : {2.0, 64.0, 16384.0}) {
    const auto c = h200_all_reduce(mib * 1024 * 1024);
    EXPECT_EQ(c.algorithm, "NVLS") << mib << " MiB";
    EXPECT_EQ(c.protocol, "Simple") << mib << " MiB";
    EXPECT_EQ(c.channels, 16);  // channel{Lo..Hi}={0..15}: Hopper's nvlsChannels
  }
}

// A node as a multi-node platform carries it: its NICs filled in (topologies' node_cluster), 8 x 47 GB/s.
NcclNode with_nics(NcclNode node) {
  node.net_bandwidth = 8 * 47 * kGB;
  return node;
}

TEST(NcclGraph, AcrossNodesStartsWithinTheNicAndRaisesBwInterUpToIt) {
  // Hopper: 48 > 47; 9 x 45 > 370.8, 9 x 42 > 370.8, 9 x 40 fits: bwIntra 40, bwInter raised to 42 and 45.
  const auto h = collectives::nvls_graph(with_nics(hopper()), 8, 2);
  EXPECT_EQ(h.channels, 8);
  EXPECT_DOUBLE_EQ(h.intra, 40 * kGB);
  EXPECT_DOUBLE_EQ(h.inter, 45 * kGB);
  // Blackwell: 96, 86, 80, 48 > 47; 9 x 45.1 fits: both 45.1.
  const auto b = collectives::nvls_graph(with_nics(blackwell()), 8, 4);
  EXPECT_DOUBLE_EQ(b.intra, 45.1 * kGB);
  EXPECT_DOUBLE_EQ(b.inter, 45.1 * kGB);
}

TEST(NvlsTreeTuner, BusBandwidthDoublesBwInterOnTwoNodesAndIsCappedPerChannel) {
  const NcclNode h = with_nics(hopper());
  const double intra = 40 * 0.85 * 7 / 8 * 2;  // 59.5
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_bus_bandwidth(h, 8, 2), 8 * std::min({intra, 2 * 45.0, 57.7}) * kGB);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_bus_bandwidth(h, 8, 4), 8 * std::min({intra, 45.0, 45.5}) * kGB);
  const NcclNode b = with_nics(blackwell());
  EXPECT_NEAR(collectives::nvls_tree_bus_bandwidth(b, 8, 2), 8 * std::min({45.1 * 0.74 * 7 / 8 * 2, 90.2, 96.0}) * kGB,
              1);
  EXPECT_NEAR(collectives::nvls_tree_bus_bandwidth(b, 8, 8), 8 * std::min({45.1 * 0.74 * 7 / 8 * 2, 45.1, 80.0}) * kGB,
              1);
  // 25 us inside the node, 20.9 us per level of the tree of nodes, up and down.
  EXPECT_NEAR(collectives::nvls_tree_latency(2), 66.8e-6, 1e-12);
  EXPECT_NEAR(collectives::nvls_tree_latency(3), 66.8e-6, 1e-12);
  EXPECT_NEAR(collectives::nvls_tree_latency(8), 25e-6 + 6 * 20.9e-6, 1e-12);
  EXPECT_NEAR(collectives::nvls_tree_tuner_time(h, 8, 2, 0), 66.8e-6, 1e-12);
}

// enqueue.cc:2276-2286 with H100/H200's 16 CTAs and 8 heads (128 concurrent operations), chunks of 128 KiB
// (64 KiB from 4 nodes); B200's 32 CTAs on 2 nodes, chunks of 64 KiB.
TEST(NvlsTreeChunk, ShrinksForCallsOfFewChunksPerConcurrentOperation) {
  constexpr double MiB = 1024.0 * 1024.0;
  const NcclNode h = hopper();
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 2, 1024 * MiB), 131072);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 2, 64 * MiB), 131072);  // not below 4 x 128 x 128 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 2, 32 * MiB), 65536);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 2, 8 * MiB), 65536);  // not below 128 x 64 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 2, 4 * MiB), 32768);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 3, 64 * MiB), 131072);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 4, 1024 * MiB), 65536);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(h, 8, 4, 4 * MiB), 32768);
  const NcclNode b = blackwell();
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(b, 8, 2, 16 * MiB), 65536);  // not below 256 x 64 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(b, 8, 2, 8 * MiB), 32768);
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(b, 8, 4, 16 * MiB), 65536);  // 24 CTAs: 192 x 64 KiB = 12 MiB
  EXPECT_DOUBLE_EQ(collectives::nvls_tree_chunk(b, 8, 4, 8 * MiB), 32768);
}

// enqueue.cc:2258-2275 on one node: 128 KiB, then 64, 32 and 16 KiB below 64, 8 and 2 chunks per concurrent
// operation (H100/H200: 16 CTAs x 8 heads = 128; B200: 24 x 8 = 192).
TEST(NvlsChunk, ShrinksForCallsOfFewChunksPerConcurrentOperation) {
  constexpr double MiB = 1024.0 * 1024.0;
  const NcclNode h = hopper();
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 1024 * MiB), 131072);  // not below 64 x 128 x 128 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 1023 * MiB), 65536);
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 64 * MiB), 65536);  // not below 8 x 128 x 64 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 32 * MiB), 32768);
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 8 * MiB), 32768);  // not below 2 x 128 x 32 KiB
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(h, 8, 4 * MiB), 16384);
  EXPECT_DOUBLE_EQ(collectives::nvls_chunk(blackwell(), 8, 1024 * MiB), 65536);  // below 64 x 192 x 128 KiB
}

// The tuner's bandwidth at the largest chunk; each halving adds Simple's 3.4 us per concurrent operation for
// every chunk more. The fill is one loop (one chunk per CTA and head) or the whole call.
TEST(NvlsCall, PaysTheChunkStepsOfSmallerChunksAndFillsOneLoop) {
  constexpr double MiB = 1024.0 * 1024.0;
  const NcclNode h = hopper();
  const double tuner = collectives::nvls_bus_bandwidth(h, 8) * 8 / 14;
  EXPECT_DOUBLE_EQ(collectives::nvls_call_algorithm_bandwidth(h, 8, 2048 * MiB), tuner);
  const double at_64k = 1 / (1 / tuner + 3.4e-6 / 128 * (1.0 / 65536 - 1.0 / 131072));
  EXPECT_NEAR(collectives::nvls_call_algorithm_bandwidth(h, 8, 512 * MiB), at_64k, 1e-3);
  EXPECT_NEAR(collectives::nvls_pipeline_fill(h, 8, 512 * MiB), 128 * 65536 / at_64k, 1e-15);
  const double at_16k = 1 / (1 / tuner + 3.4e-6 / 128 * (1.0 / 16384 - 1.0 / 131072));
  EXPECT_NEAR(collectives::nvls_pipeline_fill(h, 8, MiB), MiB / at_16k, 1e-15);  // below one loop of 2 MiB
}

// transport/nvls.cc: 16 CTAs on Hopper; on the DGX B200 24 in one node, 32 on 2 nodes, 24 on more. Without
// those figures, the NVLS graph's channels, one per GPU.
TEST(NvlsCtas, AreNcclsPerArchitectureAndNodeCountOrTheGraphsChannels) {
  EXPECT_EQ(nccl_nvls_ctas(hopper(), 8, 1), 16);
  EXPECT_EQ(nccl_nvls_ctas(hopper(), 8, 4), 16);
  EXPECT_EQ(nccl_nvls_ctas(blackwell(), 8, 1), 24);
  EXPECT_EQ(nccl_nvls_ctas(blackwell(), 8, 2), 32);
  EXPECT_EQ(nccl_nvls_ctas(blackwell(), 8, 16), 24);
  NcclNode without = with_nics(hopper());
  without.nvls_ctas = 0;
  without.nvls_tree_ctas = {};
  EXPECT_EQ(nccl_nvls_ctas(without, 8, 1), 8);
  EXPECT_EQ(nccl_nvls_ctas(without, 4, 2), 4);
}

// A loop (CTAs x heads chunks) crosses the network 2 ceil(lg nodes) times at the tuner's pace; a call smaller
// than a loop crosses whole.
TEST(NvlsTreeFill, IsTheCrossingsOfOneLoopAtTheTunersPace) {
  constexpr double MiB = 1024.0 * 1024.0;
  const NcclNode h = with_nics(hopper());
  const double algbw2 = collectives::nvls_tree_bus_bandwidth(h, 8, 2) * 16 / 30.0;
  EXPECT_NEAR(collectives::nvls_tree_pipeline_fill(h, 8, 2, 1024 * MiB), 2 * 16 * MiB / algbw2, 1e-15);
  EXPECT_NEAR(collectives::nvls_tree_pipeline_fill(h, 8, 2, 32 * MiB), 2 * 8 * MiB / algbw2, 1e-15);
  EXPECT_NEAR(collectives::nvls_tree_pipeline_fill(h, 8, 2, 2 * MiB), 2 * 2 * MiB / algbw2, 1e-15);
  const double algbw8 = collectives::nvls_tree_bus_bandwidth(h, 8, 8) * 64 / 126.0;
  EXPECT_NEAR(collectives::nvls_tree_pipeline_fill(h, 8, 8, 1024 * MiB), 6 * 8 * MiB / algbw8, 1e-15);
  NcclNode without = h;
  without.nvls_tree_ctas = {};
  EXPECT_EQ(collectives::nvls_tree_pipeline_fill(without, 8, 2, 1024 * MiB), 0);
}

// Each rank's exchange with another node's rank of its local index, s = bytes / local.
TEST(NvlsTreeExchanges, OnTwoNodesAreTheSliceEachWayWithTheOtherNodesHead) {
  const auto e = collectives::nvls_tree_exchanges(4, 2, 5, 4096);  // node 1, head 1
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].peer, 1);
  EXPECT_DOUBLE_EQ(e[0].sends, 1024);
  EXPECT_DOUBLE_EQ(e[0].receives, 1024);
}

TEST(NvlsTreeExchanges, MatchPairwiseAndGiveInnerNodesTwiceTheSlice) {
  for (int nodes : {3, 4, 5, 8, 13}) {
    std::map<std::pair<int, int>, double> sent, received;
    std::vector<double> total(static_cast<std::size_t>(nodes), 0);
    for (int node = 0; node < nodes; ++node)
      for (const auto& x : collectives::nvls_tree_exchanges(2, nodes, node * 2 + 1, 2000)) {
        EXPECT_EQ(x.peer % 2, 1) << "a head exchanges with the heads of its own index";
        sent[{node, x.peer / 2}] += x.sends;
        received[{x.peer / 2, node}] += x.receives;
        total[static_cast<std::size_t>(node)] += x.sends;
        EXPECT_DOUBLE_EQ(x.sends, x.receives);
      }
    EXPECT_EQ(sent, received) << nodes << " nodes";
    // Each tree moves s / 2 = 500 bytes each way over each of its nodes - 1 edges.
    double all = 0;
    for (double t : total) {
      EXPECT_LE(t, 2000.0);
      EXPECT_GE(t, 500.0);
      all += t;
    }
    EXPECT_DOUBLE_EQ(all, 2 * 2 * (nodes - 1) * 500.0) << nodes << " nodes";
  }
}

TEST(NcclChoice, AcrossNodesWhoseSwitchesReduceIsNvlsTreeForLargeAllReducesAndTreeForSmallOnes) {
  const NcclNode h = with_nics(hopper());
  const auto choice = [&](double bytes, std::vector<int> shape) {
    return nccl_choice(h, "nccl", CollectiveKind::all_reduce, shape,
                       static_cast<std::int64_t>(bytes / 4 / (shape[0] * shape[1])), 4, 24, "", true);
  };
  const auto large = choice(1 << 30, {8, 2});
  EXPECT_EQ(large.algorithm, "NVLSTree");
  EXPECT_EQ(large.protocol, "Simple");
  EXPECT_EQ(large.channels, 16);
  EXPECT_EQ(choice(1 << 30, {8, 4}).algorithm, "NVLSTree");
  EXPECT_EQ(choice(32 * 1024, {8, 2}).algorithm, "Tree");
  // One device per node: NVLS needs two channels.
  EXPECT_EQ(choice(1 << 30, {1, 4}).algorithm, "Ring");
}

TEST(NcclChoice, IsRingWithoutAReducingSwitchForGathersAndUnderANonSimpleProtocol) {
  const double bytes = 1 << 30;
  const auto per_rank = static_cast<std::int64_t>(bytes / 64);
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_reduce, {8}, per_rank, 4, 24, "", false).algorithm,
            "Ring");
  EXPECT_EQ(nccl_choice(with_nics(hopper()), "nccl", CollectiveKind::all_reduce, {8, 2}, per_rank, 4, 24, "", false)
                .algorithm,
            "Ring");
  EXPECT_EQ(nccl_choice(with_nics(hopper()), "nccl", CollectiveKind::all_gather, {8, 2}, per_rank, 4, 24, "", true)
                .algorithm,
            "Ring");
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_gather, {8}, per_rank, 4, 24, "", true).algorithm,
            "Ring");
  EXPECT_EQ(h200_all_reduce(bytes, "LL128").algorithm, "Ring");
  EXPECT_EQ(h200_all_reduce(bytes, "Simple").algorithm, "NVLS");
  EXPECT_EQ(nccl_choice(hopper(), "nccl_ring", CollectiveKind::all_reduce, {8}, per_rank, 4, 24, "", true).algorithm,
            "Ring");
  EXPECT_THROW(nccl_choice(hopper(), "ring", CollectiveKind::all_reduce, {8}, per_rank, 4, 24, "", true), ValueError);
}

// ---------------------------------------------------------------------------------------------------------
// Under the pinned alpha-beta model: 8 devices on a reducing switch whose ports have `port` B/s and 1 us,
// carrying Hopper's NCCL figures.

constexpr int kDevices = 8;
constexpr std::int64_t kFloats = 256 * 1024;  // 1 MiB per device
constexpr double kPortLatency = 1e-6;

topologies::NodeSpec nvls_node(double port) {
  topologies::NodeSpec node;
  node.devices_per_node = kDevices;
  node.device = testing::free_compute_cluster(1).device;
  node.device_link = {port, kPortLatency};
  node.host_link = {10 * kGB, 1e-6};
  node.nic = {25 * kGB, 1e-6};
  node.nccl = hopper();
  return node;
}

double psum_time(Simulation& sim, const std::string& algorithm, const Array& x) {
  auto f = pmap([&](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = algorithm}); },
                {.axis_name = "i"});
  f(sim, {x});
  return testing::collective_time(sim, "psum");
}

const double kBytes = 4.0 * kFloats;
const double kAlgbw = 8 * 59.5 * kGB * kDevices / (2.0 * (kDevices - 1));  // 272 GB/s
// 1 MiB a rank: chunks of 16 KiB (below 2 x 128 x 32 KiB), 3.4 us per 16 KiB more than at 128 KiB per
// concurrent operation; a loop of 128 x 16 KiB is more than the call, so the fill is the whole call.
const double kCallAlgbw = 1 / (1 / kAlgbw + 3.4e-6 / 128 * (1.0 / 16384 - 1.0 / 131072));  // 196 GB/s
const double kFill = kBytes / kCallAlgbw;

TEST(NvlsTime, WithSlowPortsIsTheLatencyAndFillThenEachWaysBytes) {
  Simulation sim(topologies::accelerator_node(nvls_node(100 * kGB)), {alpha_beta_config(), {}});
  const double each_way = kBytes + kBytes / kDevices;
  EXPECT_NEAR(psum_time(sim, "nvls", Array::abstract(Shape{kDevices, kFloats}, DType::f32)),
              25e-6 + kFill + kPortLatency + each_way / (100 * kGB), 1e-12);
}

TEST(NvlsTime, WithFastPortsIsTheLatencyAndFillThenTheCallsRate) {
  Simulation sim(topologies::accelerator_node(nvls_node(1000 * kGB)), {alpha_beta_config(), {}});
  EXPECT_NEAR(psum_time(sim, "nvls", Array::abstract(Shape{kDevices, kFloats}, DType::f32)),
              25e-6 + kFill + kBytes / kCallAlgbw, 1e-12);
}

// Values that make float32's order visible: rank r's element j is (r + 1) * 0.1f + j.
Array rows() {
  std::vector<double> values;  // each exactly a float
  for (int r = 0; r < kDevices; ++r)
    for (int j = 0; j < 5000; ++j) values.push_back(static_cast<float>(r + 1) * 0.1f + static_cast<float>(j));
  return Array::from_values(Shape{kDevices, 5000}, values);
}

TEST(NvlsValues, AreTheRanksArraysSummedInRankOrderAndRealDataTakesTheAbstractTime) {
  Simulation sim(topologies::accelerator_node(nvls_node(100 * kGB)), {alpha_beta_config(), {}});
  const Array x = rows();
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = "nvls"}); },
                {.axis_name = "i"});
  const Array out = sim.device_get(f(sim, {x})).leaf();
  const double real = psum_time(sim, "nvls", x);
  EXPECT_DOUBLE_EQ(psum_time(sim, "nvls", Array::abstract(x.shape(), DType::f32)), real);
  const auto got = out.to_doubles();
  for (int j = 0; j < 5000; ++j) {
    float sum = 0.1f + static_cast<float>(j);
    for (int r = 1; r < kDevices; ++r) sum = sum + (static_cast<float>(r + 1) * 0.1f + static_cast<float>(j));
    for (int d = 0; d < kDevices; ++d)
      ASSERT_EQ(got[static_cast<std::size_t>(d * 5000 + j)], static_cast<double>(sum)) << "device " << d << " element " << j;
  }
}

TEST(NcclAlgorithm, RunsNvlsForALargeAllReduceAndTheRingForASmallOne) {
  Simulation sim(topologies::accelerator_node(nvls_node(1000 * kGB)), {alpha_beta_config(), {}});
  const Array large = Array::abstract(Shape{kDevices, 4 * kFloats}, DType::f32);  // 4 MiB: NVLS
  EXPECT_NEAR(psum_time(sim, "nccl", large), psum_time(sim, "nvls", large), 1e-12);
  const Array small = Array::abstract(Shape{kDevices, kFloats}, DType::f32);  // 1 MiB: Ring LL
  EXPECT_NEAR(psum_time(sim, "nccl", small), psum_time(sim, "nccl_ring", small), 1e-12);
}

TEST(NvlsRefusal, OnANodeWhoseSwitchDoesNotReduceNamesWhereItRuns) {
  auto node = nvls_node(100 * kGB);
  node.nccl = *topologies::node_preset("dgx_a100").nccl;  // NVSwitch before Hopper: no NVLS
  Simulation sim(topologies::accelerator_node(node));
  try {
    psum_time(sim, "nvls", Array::zeros({kDevices, 4}));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "all_reduce algorithm 'nvls' needs every device of the group on one node whose NVSwitch "
                 "reduces (NVLink SHARP: the dgx_h100, hgx_h200 and dgx_b200 presets, one node or a node of "
                 "--nodes); this group of 8 devices is not");
  }
}

TEST(NvlsRefusal, AcrossNodesAndAutoNeverPicksIt) {
  topologies::MultiNodeSpec spec{.node = nvls_node(100 * kGB), .num_nodes = 2};
  Simulation sim(topologies::multi_node_cluster(spec));
  EXPECT_THROW(psum_time(sim, "nvls", Array::zeros({2 * kDevices, 4})), ValueError);
  for (const char* algorithm : {"nvls", "nvls_tree"})
    EXPECT_NE(collectives::choose_algorithm(CollectiveKind::all_reduce,
                                            {.p = 8, .n = 1e9, .alpha = 1e-6, .beta = 1e-11}),
              algorithm);
}

TEST(NvlsTreeRefusal, OnOneNodeAndWithoutReducingSwitchesNamesWhereItRuns) {
  const std::string message =
      "all_reduce algorithm 'nvls_tree' needs a group of whole nodes, at least 2, whose NVSwitches reduce "
      "(NVLink SHARP: the dgx_h100, hgx_h200 and dgx_b200 presets with --nodes); this group of 8 devices is "
      "not (on one node: 'nvls')";
  Simulation one(topologies::accelerator_node(nvls_node(100 * kGB)));
  try {
    psum_time(one, "nvls_tree", Array::zeros({kDevices, 4}));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(e.what(), message);
  }
}

TEST(NvlsTreeRefusal, OnNodesWhoseSwitchesDoNotReduce) {
  auto node = nvls_node(100 * kGB);
  node.devices_per_node = 4;
  node.nccl = *topologies::node_preset("dgx_a100").nccl;
  Simulation sim(topologies::multi_node_cluster({.node = node, .num_nodes = 2}));
  EXPECT_THROW(psum_time(sim, "nvls_tree", Array::zeros({kDevices, 4})), ValueError);
}

// ---------------------------------------------------------------------------------------------------------
// NVLSTree under the pinned model: `nodes` nodes of 4 devices, ports of 1000 GB/s (never the bottleneck),
// NICs of 25 GB/s and 1 us, so that NCCL's multi-node NVLS graph is bwIntra = bwInter = 24 GB/s (the fastest
// Hopper speed within a NIC; 5 x 24 fits the NVLink bandwidth).

constexpr int kLocal = 4;

Simulation nvls_tree_cluster(int nodes) {
  auto node = nvls_node(1000 * kGB);
  node.devices_per_node = kLocal;
  return Simulation(topologies::multi_node_cluster({.node = node, .num_nodes = nodes}), {alpha_beta_config(), {}});
}

TEST(NvlsTreeTime, OnTwoNodesIsTheLatencyAndFillThenTheTunersRate) {
  Simulation sim = nvls_tree_cluster(2);
  const int p = 2 * kLocal;
  // busbw 4 x min(24 x 0.85 x 3/4 x 2, 2 x 24, 57.7) = 122.4 GB/s; the NICs carry a quarter of the vector
  // each way at 25 GB/s, faster than the pace. 1 MiB is below one loop (16 CTAs x 4 heads x 32 KiB), which
  // crosses the network up and down before the pipeline is full: twice the call at the pace.
  const double algbw = 4 * 30.6 * kGB * p / (2.0 * (p - 1));
  const Array x = Array::abstract(Shape{p, kFloats}, DType::f32);
  EXPECT_NEAR(psum_time(sim, "nvls_tree", x), 66.8e-6 + 2 * kBytes / algbw + kBytes / algbw, 1e-9);
}

TEST(NcclAlgorithm, RunsNvlsTreeForALargeAllReduceAcrossNodesOfEightAndTheTreeForASmallOne) {
  auto node = nvls_node(1000 * kGB);
  node.nic = {50 * kGB, 1e-6};
  Simulation sim(topologies::multi_node_cluster({.node = node, .num_nodes = 2}), {alpha_beta_config(), {}});
  const Array large = Array::abstract(Shape{2 * kDevices, 16 * kFloats}, DType::f32);  // 16 MiB: NVLSTree
  EXPECT_NEAR(psum_time(sim, "nccl", large), psum_time(sim, "nvls_tree", large), 1e-12);
  const Array small = Array::abstract(Shape{2 * kDevices, 1024}, DType::f32);  // 4 KiB: Tree LL
  EXPECT_NEAR(psum_time(sim, "nccl", small), psum_time(sim, "nccl_tree", small), 1e-12);
}

TEST(NvlsTreeTime, OnFourNodesIsTheLatencyAndFillThenTheInnerNodesNicsTwiceTheSlice) {
  Simulation sim = nvls_tree_cluster(4);
  // busbw 4 x min(30.6, 24, 45.5) = 96 GB/s: algbw 51.2 GB/s. The NICs of the two nodes inner in a tree carry
  // 2 s = n / 2 each way (NCCL's double binary tree of 4 nodes: 0 <- 2 <- {1, 3} and 3 <- 1 <- {2, 0}), at 25
  // GB/s: n / 50 GB/s, over a route of two 1 us links (NIC up, NIC down).
  const Array x = Array::abstract(Shape{4 * kLocal, kFloats}, DType::f32);
  // The fill: the call (below a loop) crosses the network 4 times, up and down 2 levels, at the pace.
  const double nic = 2e-6 + (kBytes / 2) / (25 * kGB);
  ASSERT_GT(nic, kBytes / (51.2 * kGB));
  EXPECT_NEAR(psum_time(sim, "nvls_tree", x), 25e-6 + 4 * 20.9e-6 + 4 * kBytes / (51.2 * kGB) + nic, 1e-9);
}

TEST(NvlsTreeValues, AreTheRanksArraysSummedInRankOrder) {
  Simulation sim = nvls_tree_cluster(2);
  const Array x = rows();
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, {.algorithm = "nvls_tree"}); },
                {.axis_name = "i"});
  const auto got = sim.device_get(f(sim, {x})).leaf().to_doubles();
  for (int j = 0; j < 5000; ++j) {
    float sum = 0.1f + static_cast<float>(j);
    for (int r = 1; r < kDevices; ++r) sum = sum + (static_cast<float>(r + 1) * 0.1f + static_cast<float>(j));
    for (int d = 0; d < kDevices; ++d)
      ASSERT_EQ(got[static_cast<std::size_t>(d * 5000 + j)], static_cast<double>(sum)) << "device " << d << " element " << j;
  }
}

}  // namespace
}  // namespace spmdsim
