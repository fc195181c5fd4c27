// RCCL's MSCCL all-pairs all-reduce on 8 GPUs of a node with RCCL's MSCCL figure: which of RCCL's programs
// runs a call (its files' size ranges and chunk counts, 8 ranks of one node), the choice `nccl` reports, the
// default on such a node, and, under the pinned alpha-beta model, the closed form: RCCL's latency for two
// steps of the protocol, then the larger of the program's rate over the vector and the busiest link's
// transfer (2 n / p each way to every peer, LL doubling it on the wire); the values are the ranks' sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "collective_time.hpp"
#include "collectives/rccl_msccl.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using collectives::MscclProgram;
using collectives::NcclProtocol;

constexpr double kGB = 1e9;
constexpr int kDevices = 8;
constexpr double kChannelRate = 18.0 * kGB;
constexpr double kMiB = 1024.0 * 1024;

RcclNode msccl_node() {
  return {.bus_bandwidth = 7 * 48 * kGB, .msccl_channel_bandwidth = kChannelRate, .source = "test"};
}

// The program for a float32 vector of `bytes` over `ranks` ranks on `nodes` nodes.
std::optional<MscclProgram> program(double bytes, int ranks = kDevices, int nodes = 1) {
  return collectives::msccl_all_reduce_program(msccl_node(), ranks, nodes,
                                               static_cast<std::int64_t>(bytes / 4), bytes);
}

void expect_program(double bytes, NcclProtocol protocol, int channels) {
  const auto chosen = program(bytes);
  ASSERT_TRUE(chosen) << bytes;
  EXPECT_EQ(chosen->protocol, protocol) << bytes;
  EXPECT_EQ(chosen->channels, channels) << bytes;
}

TEST(MscclProgram, LLOnFourChannelsToSixtyFourKiBThenEightChannelsThenSimpleToSixteenMiB) {
  expect_program(1024, NcclProtocol::ll, 4);
  expect_program(64 * 1024, NcclProtocol::ll, 4);
  expect_program(128 * 1024, NcclProtocol::ll, 8);
  expect_program(256 * 1024, NcclProtocol::ll, 8);
  expect_program(512 * 1024, NcclProtocol::simple, 8);
  expect_program(16 * kMiB, NcclProtocol::simple, 8);
  EXPECT_FALSE(program(32 * kMiB));
  EXPECT_FALSE(program(16 * kMiB + 2048));  // a multiple of 512 elements, past the last file's range
}

TEST(MscclProgram, NeedsACountThatIsAMultipleOfTheProgramsChunks) {
  EXPECT_FALSE(program(512));  // 128 elements: fewer than the 256 chunks of a loop
  EXPECT_FALSE(collectives::msccl_all_reduce_program(msccl_node(), kDevices, 1, 1000, 4000));
  // 65 KiB in 16640 elements: a multiple of 256 but not of the 8-channel program's 512.
  EXPECT_FALSE(collectives::msccl_all_reduce_program(msccl_node(), kDevices, 1, 16640, 66560));
  // 64 KiB of 2-byte elements: 32768 elements, inside the 4-channel LL range.
  EXPECT_TRUE(collectives::msccl_all_reduce_program(msccl_node(), kDevices, 1, 32768, 65536));
}

TEST(MscclProgram, RunsOnEightRanksOfOneNodeWithRcclsFigure) {
  EXPECT_FALSE(program(kMiB, 4));
  EXPECT_FALSE(program(kMiB, 16, 2));
  EXPECT_FALSE(program(kMiB, kDevices, 2));
  RcclNode without = msccl_node();
  without.msccl_channel_bandwidth = 0;
  EXPECT_FALSE(collectives::msccl_all_reduce_program(without, kDevices, 1, 262144, kMiB));
}

TEST(MscclProtocol, RcclsLatencyForTwoStepsAndTheProgramsChannels) {
  const auto ll = collectives::msccl_channel_protocol(msccl_node(), *program(64 * 1024));
  EXPECT_NEAR(ll.start_latency, 12e-6 + 2 * 0.8e-6, 1e-15);
  EXPECT_EQ(ll.wire_bytes_per_byte, 2);
  EXPECT_EQ(ll.rate, 4 * kChannelRate);
  const auto simple = collectives::msccl_channel_protocol(msccl_node(), *program(kMiB));
  EXPECT_NEAR(simple.start_latency, 17e-6 + 2 * 2.1e-6, 1e-15);
  EXPECT_EQ(simple.wire_bytes_per_byte, 1);
  EXPECT_EQ(simple.rate, 8 * kChannelRate);
}

TEST(MscclChoice, NcclNamesTheProgramForAllReducesItCoversAndTheRingElsewhere) {
  const auto choose = [](std::string_view algorithm, CollectiveKind kind, double bytes,
                         const std::string& protocol = "") {
    const auto per_rank = static_cast<std::int64_t>(bytes / 4 / kDevices);
    return rccl_choice(msccl_node(), algorithm, kind, {kDevices}, per_rank, 4, 7, protocol);
  };
  const auto small = choose("nccl", CollectiveKind::all_reduce, 64 * 1024);
  EXPECT_EQ(small.algorithm, "MSCCL");
  EXPECT_EQ(small.protocol, "LL");
  EXPECT_EQ(small.channels, 4);
  EXPECT_EQ(choose("nccl", CollectiveKind::all_reduce, kMiB).protocol, "Simple");
  // A program fixes its protocol: RCCL runs it whatever NCCL_PROTO says.
  EXPECT_EQ(choose("nccl", CollectiveKind::all_reduce, 64 * 1024, "Simple").protocol, "LL");
  EXPECT_EQ(choose("nccl", CollectiveKind::all_reduce, 32 * kMiB).algorithm, "Ring");
  EXPECT_EQ(choose("nccl_ring", CollectiveKind::all_reduce, kMiB).algorithm, "Ring");
  EXPECT_EQ(choose("nccl", CollectiveKind::all_gather, kMiB).algorithm, "Ring");
}

TEST(MscclDefault, AnRcclNodeRunsNcclByDefault) {
  EXPECT_EQ(default_algorithm(CollectiveKind::all_reduce, CollectiveLibrary::rccl), "nccl");
  EXPECT_EQ(default_algorithm(CollectiveKind::all_gather, CollectiveLibrary::rccl), "nccl");
  EXPECT_EQ(default_algorithm(CollectiveKind::all_to_all, CollectiveLibrary::rccl), "pairwise");
  Simulation sim(testing::rccl_mesh_node(msccl_node()));
  EXPECT_EQ(collective_library(sim.platform()), CollectiveLibrary::rccl);
}

// The default all-reduce of `floats` floats per device on the mesh node with RCCL's MSCCL figure.
double psum_time(std::int64_t floats) {
  Simulation sim(testing::rccl_mesh_node(msccl_node()), {alpha_beta_config(), {}});
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::abstract(Shape{kDevices, floats}, DType::f32)});
  return testing::collective_time(sim, "psum");
}

// Simple at 1 MiB: the 8 channels' rate holds it (7.7 us), not a link's 1 us + 256 KiB at 100 GB/s.
TEST(MscclTime, SimpleIsItsLatencyThenTheVectorAtTheChannelsRate) {
  const double bytes = kMiB;
  const double link = 1e-6 + 2 * bytes / kDevices / (100 * kGB);
  const double rate = bytes / (8 * kChannelRate);
  ASSERT_GT(rate, link);
  EXPECT_NEAR(psum_time(static_cast<std::int64_t>(bytes / 4)), 21.2e-6 + rate, 1e-12);
}

// LL at 128 KiB: each link carries its 2 x 16 KiB twice over (LL's flags) in 1 us + 0.66 us, longer than the
// channels' 0.96 us.
TEST(MscclTime, LLIsItsLatencyThenTheBusiestLinkWithItsFlags) {
  const double bytes = 128 * 1024;
  const double link = 1e-6 + 2 * 2 * bytes / kDevices / (100 * kGB);
  const double rate = bytes / (8 * kChannelRate);
  ASSERT_GT(link, rate);
  EXPECT_NEAR(psum_time(static_cast<std::int64_t>(bytes / 4)), 13.6e-6 + link, 1e-12);
}

TEST(MscclValues, TheAllPairsAllReduceGivesTheRanksSum) {
  Simulation sim(testing::rccl_mesh_node(msccl_node()));
  constexpr int kFloats = 1024;
  std::vector<double> values;
  for (int i = 0; i < kDevices; ++i)
    for (int j = 0; j < kFloats; ++j) values.push_back(i + j * 0.5);
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  const Array host = sim.device_get(f(sim, {Array::from_values(Shape{kDevices, kFloats}, values)})).leaf();
  for (int j = 0; j < kFloats; ++j) EXPECT_DOUBLE_EQ(host.item(j), 28.0 + 8 * j * 0.5) << j;
}

}  // namespace
}  // namespace spmdsim
