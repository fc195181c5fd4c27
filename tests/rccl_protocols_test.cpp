// RCCL's ring protocols on a full-mesh node that carries RCCL's figures (Platform::rccl): the tuner's
// choice by size, LL128 refused, and, under the pinned alpha-beta model, Simple's closed form: its base
// latency, then 2(p-1) steps each paying RCCL's step latency over the route's, on every disjoint cycle.
#include <gtest/gtest.h>

#include <string>

#include "collective_time.hpp"
#include "collectives/rccl_protocols.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using collectives::NcclProtocol;

constexpr double kGB = 1e9;
constexpr int kDevices = 8;

RcclNode mi300x_like() {
  return {.bus_bandwidth = 7 * 48 * kGB, .source = "test"};
}

TEST(RcclTuner, PicksLLForSmallAllReducesAndSimpleFromAboutFourHundredKilobytes) {
  // 8 GPUs, 14 steps: LL 12 + 14 x 0.8 = 23.2 us + S / (336 x 0.08 x 8/14 GB/s), Simple 17 + 14 x 2.1 = 46.4
  // us + S / (336 x 8/14 GB/s); they cross near 387 KB.
  const auto time = [](NcclProtocol protocol, double bytes) {
    return collectives::rccl_ring_tuner_time(mi300x_like(), protocol, CollectiveKind::all_reduce, kDevices,
                                             bytes);
  };
  EXPECT_NEAR(time(NcclProtocol::ll, 0), 23.2e-6, 1e-12);
  EXPECT_NEAR(time(NcclProtocol::simple, 0), 46.4e-6, 1e-12);
  const double mib = 1024.0 * 1024;
  EXPECT_NEAR(time(NcclProtocol::simple, 8 * mib), 46.4e-6 + 8 * mib / (336 * kGB * 8 / 14), 1e-12);
  const auto pick = [](double bytes) {
    return collectives::rccl_tuner_protocol(mi300x_like(), CollectiveKind::all_reduce, kDevices, bytes);
  };
  EXPECT_EQ(pick(32 * 1024.0), NcclProtocol::ll);
  EXPECT_EQ(pick(256 * 1024.0), NcclProtocol::ll);
  EXPECT_EQ(pick(512 * 1024.0), NcclProtocol::simple);
  EXPECT_EQ(pick(8 * mib), NcclProtocol::simple);
}

TEST(RcclChoice, NamesTheRingTheProtocolAndOneChannelPerCycle) {
  const auto choice =
      rccl_choice(mi300x_like(), "nccl_ring", CollectiveKind::all_reduce, {kDevices}, 262144, 4, 7, "");
  EXPECT_EQ(choice.algorithm, "Ring");
  EXPECT_EQ(choice.protocol, "Simple");
  EXPECT_EQ(choice.channels, 7);
  EXPECT_EQ(rccl_choice(mi300x_like(), "nccl_ring", CollectiveKind::all_reduce, {kDevices}, 1024, 4, 7, "")
                .protocol,
            "LL");
  EXPECT_EQ(rccl_choice(mi300x_like(), "nccl_ring", CollectiveKind::all_reduce, {kDevices}, 3, 4, 7, "Simple")
                .channels,
            3);
}

TEST(RcclChoice, LL128IsRefusedWithTheProtocolsThatRun) {
  try {
    rccl_choice(mi300x_like(), "nccl_ring", CollectiveKind::all_reduce, {kDevices}, 1024, 4, 7, "LL128");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "RCCL runs LL128 on gfx90a only; valid on this node: LL, Simple (or none: the tuner's)");
  }
}

// Simple moves what the links give (its share is 1): each of the 7 channels walks its own cycle, and every
// step pays RCCL's 2.1 us over the route's 1 us.
TEST(RcclProtocolTime, SimpleIsItsBaseLatencyThenStepsOfItsStepLatencyOverTheRoutes) {
  constexpr std::int64_t floats = 8 * 9 * 5 * 7 * 1024;
  Simulation sim(testing::rccl_mesh_node(mi300x_like()), {alpha_beta_config(), {}});
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::abstract(Shape{kDevices, floats}, DType::f32)});
  const double step = 2.1e-6 + 1e-6 + 4.0 * floats / (7 * kDevices) / (100 * kGB);
  EXPECT_NEAR(testing::collective_time(sim, "psum"), 17e-6 + 2 * (kDevices - 1) * step, 1e-12);
}

TEST(RcclProtocolValues, LLAndSimpleGiveTheRingsSum) {
  Simulation sim(testing::rccl_mesh_node(mi300x_like()));
  std::vector<double> values;
  for (int i = 0; i < kDevices; ++i)
    for (int j = 0; j < 700; ++j) values.push_back(i + j * 0.5);
  const Array x = Array::from_values(Shape{kDevices, 700}, values);
  for (const std::string protocol : {"LL", "Simple"}) {
    auto f = pmap(
        [&](const Args& a) -> Tree {
          return psum(a[0].array(), "i", {}, {.algorithm = "nccl_ring", .protocol = protocol});
        },
        {.axis_name = "i"});
    const Array host = sim.device_get(f(sim, {x})).leaf();
    for (int j = 0; j < 700; ++j) EXPECT_DOUBLE_EQ(host.item(j), 28.0 + 8 * j * 0.5) << protocol << " " << j;
  }
}

}  // namespace
}  // namespace spmdsim
