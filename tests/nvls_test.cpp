// NVLS (NVLink SHARP) and `nccl`: the NVLS graph and tuner figures NCCL 2.30.7 derives for Hopper and
// Blackwell nodes; the choice NCCL's tuner makes between Ring and NVLS, against the one NCCL_DEBUG printed on
// 8 H200s; and, under the pinned alpha-beta model, the switch's closed form (its latency, then each device's
// port carrying (p + 1) / p of the vector each way, at most at the tuner's rate), its values (the ranks'
// arrays summed in rank order) and its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

TEST(NvlsGraph, IsWhatNcclsSearchFindsOnHopperAndBlackwell) {
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
    EXPECT_EQ(c.channels, 8);
  }
}

TEST(NcclChoice, IsRingWithoutAReducingSwitchAcrossNodesForGathersAndUnderANonSimpleProtocol) {
  const double bytes = 1 << 30;
  const auto per_rank = static_cast<std::int64_t>(bytes / 64);
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_reduce, {8}, per_rank, 4, 24, "", false).algorithm,
            "Ring");
  EXPECT_EQ(nccl_choice(hopper(), "nccl", CollectiveKind::all_reduce, {8, 2}, per_rank, 4, 24, "", true).algorithm,
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

TEST(NvlsTime, WithSlowPortsIsTheLatencyThenEachWaysBytes) {
  Simulation sim(topologies::accelerator_node(nvls_node(100 * kGB)), {alpha_beta_config(), {}});
  const double each_way = kBytes + kBytes / kDevices;
  EXPECT_NEAR(psum_time(sim, "nvls", Array::abstract(Shape{kDevices, kFloats}, DType::f32)),
              25e-6 + kPortLatency + each_way / (100 * kGB), 1e-12);
}

TEST(NvlsTime, WithFastPortsIsTheLatencyThenTheTunersRate) {
  Simulation sim(topologies::accelerator_node(nvls_node(1000 * kGB)), {alpha_beta_config(), {}});
  EXPECT_NEAR(psum_time(sim, "nvls", Array::abstract(Shape{kDevices, kFloats}, DType::f32)),
              25e-6 + kBytes / kAlgbw, 1e-12);
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
  // nccl runs the ring across nodes, and auto picks among the textbook algorithms.
  const Array x = Array::abstract(Shape{2 * kDevices, kFloats}, DType::f32);
  // SimGrid rounds its clock to 1 ns (surf/precision): the first call after the platform is built differs by that.
  EXPECT_NEAR(psum_time(sim, "nccl", x), psum_time(sim, "nccl_ring", x), 1e-9);
  EXPECT_NE(collectives::choose_algorithm(CollectiveKind::all_reduce, {.p = 8, .n = 1e9, .alpha = 1e-6, .beta = 1e-11}),
            "nvls");
}

}  // namespace
}  // namespace spmdsim
