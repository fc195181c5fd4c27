// How every command starts its Simulation: SimGrid gets the command line's --cfg / --log, the platform's own
// network settings apply where the command line does not set them, and SimGrid's INFO line per setting is
// silenced (the commands' headers say which settings ran).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/platform_options.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::cli {

// A Simulation of `builder`'s platform. `simgrid_argv` is the program name, then --cfg / --log as given;
// `platform_settings` ("key:value", a preset's network model) go into `options.simgrid_config` but those a
// --cfg sets.
std::unique_ptr<Simulation> start_simulation(const PlatformBuilder& builder,
                                             const std::vector<std::string>& platform_settings,
                                             std::vector<std::string> simgrid_argv,
                                             SimulationOptions options = {});

// The same for a command's chosen platform, which must have at least `devices` devices. Throws UsageError
// when a --platform file has fewer, or when its builder refuses it (a missing route, a bad property:
// choose_platform checked the other platforms).
std::unique_ptr<Simulation> start_simulation(const ChosenPlatform& platform,
                                             std::vector<std::string> simgrid_argv, int devices,
                                             SimulationOptions options = {});

}  // namespace spmdsim::cli
