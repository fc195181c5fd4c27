// The platform carries its network model (PlatformBuilder::network_config): topologies/' builders run under
// the presets' CM02 alpha-beta settings with no options at all, a node preset under its own model, and a
// --cfg on the command line or SimulationOptions::simgrid_config replace the platform's settings key by key.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim {
namespace {

std::string setting(const std::string& name) {
  for (const auto& [key, value] : simgrid_network_settings())
    if (key == name) return value;
  return "";
}

// The demo's first collective: a 4-byte psum over 8 A100-class devices on a switch.
double psum_seconds(Simulation& sim) {
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::full({8}, 1.0)});
  const auto report = sim.report();
  return report.calls.back().times.at(0).communication.at("psum");
}

TEST(NetworkModel, ASimulationWithoutOptionsRunsThePresetsModel) {
  Simulation sim(topologies::switch_cluster(topologies::default_switch_cluster(8)));
  EXPECT_EQ(setting("network/model"), "CM02");
  EXPECT_EQ(sim.report().config, alpha_beta_config());
  // Under CM02: the kernel's 2 us launch, then 2 (p - 1) steps of 2 x 1 us fabric latency, the bytes' time
  // negligible.
  EXPECT_NEAR(psum_seconds(sim), 30e-6, 0.5e-6);
}

TEST(NetworkModel, LV08IsOneCfgAway) {
  char program[] = "network_model_test";
  char cfg[] = "--cfg=network/model:LV08";
  char* argv[] = {program, cfg, nullptr};
  int argc = 2;
  Simulation sim(&argc, argv, topologies::switch_cluster(topologies::default_switch_cluster(8)));
  EXPECT_EQ(setting("network/model"), "LV08");
  const std::vector<std::string> in_force{"network/model:LV08", "network/crosstraffic:0",
                                          "network/TCP-gamma:0", "network/optim:Full"};
  EXPECT_EQ(sim.report().config, in_force);
  EXPECT_GT(psum_seconds(sim), 13 * 28e-6);  // LV08's latency factor, 13.01
}

TEST(NetworkModel, OptionsWinOverThePlatform) {
  Simulation sim(topologies::switch_cluster(topologies::default_switch_cluster(2)),
                 {.simgrid_config = {"network/model:LV08"}});
  EXPECT_EQ(setting("network/model"), "LV08");
  const std::vector<std::string> in_force{"network/crosstraffic:0", "network/TCP-gamma:0",
                                          "network/optim:Full", "network/model:LV08"};
  EXPECT_EQ(sim.report().config, in_force);
}

TEST(NetworkModel, PresetsCarryTheirModelAndABareCallableNone) {
  const auto& dgx = topologies::node_preset("dgx_h100");
  EXPECT_EQ(topologies::node_platform(dgx).network_config(), dgx.network_model->simgrid_config);
  const auto& slice = topologies::slice_presets().front();
  EXPECT_EQ(topologies::slice_platform(slice).network_config(), slice.network_model->simgrid_config);
  const PlatformBuilder bare([] { return Platform{}; });
  EXPECT_TRUE(bare.network_config().empty());
}

}  // namespace
}  // namespace spmdsim
