#include "common/simulation_start.hpp"

#include <fmt/format.h>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli {

std::unique_ptr<Simulation> start_simulation(const PlatformBuilder& builder,
                                             const std::vector<std::string>& platform_settings,
                                             std::vector<std::string> simgrid_argv,
                                             SimulationOptions options) {
  const std::vector<std::string> simgrid_args(simgrid_argv.begin() + 1, simgrid_argv.end());
  // SimulationOptions' settings apply after argv: leaving out those the command line sets lets it win.
  options.simgrid_config = settings_not_overridden(platform_settings, simgrid_args);
  // SimGrid reports every configuration change at INFO. A --log of the user's comes later and wins.
  simgrid_argv.insert(simgrid_argv.begin() + 1, "--log=xbt_cfg.thres:warning");
  Argv argv(simgrid_argv);
  return std::make_unique<Simulation>(argv.argc(), argv.argv(), builder, std::move(options));
}

std::unique_ptr<Simulation> start_simulation(const ChosenPlatform& platform,
                                             std::vector<std::string> simgrid_argv, int devices,
                                             SimulationOptions options) {
  std::unique_ptr<Simulation> sim;
  try {
    sim = start_simulation(platform.builder, platform.simgrid_config, std::move(simgrid_argv),
                           std::move(options));
  } catch (const ValueError& e) {
    // What the builder finds wrong with a platform only SimGrid could load (a --platform file) is bad input.
    if (platform.platform_file.empty()) throw;
    throw UsageError(fmt::format("--platform: {}", e.what()));
  }
  // A file's devices are known once SimGrid has loaded it.
  if (sim->num_devices() < devices)
    throw UsageError(fmt::format("--devices {} is more than the {} devices of --platform {}{}", devices,
                                 sim->num_devices(), platform.platform_file,
                                 platform.hostfile.empty() ? "" : " in --hostfile " + platform.hostfile));
  return sim;
}

}  // namespace spmdsim::cli
