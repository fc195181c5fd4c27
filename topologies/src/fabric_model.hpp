// The network model every builder of topologies/ gives its platform (PlatformBuilder::network_config): the
// presets' fabrics (NVLink/NVSwitch, PCIe, InfiniBand, TPU ICI) are credit-based, not TCP, so they run under
// CM02 alpha-beta with no cross-traffic or TCP window (presets.cpp, "Network models"), not SimGrid's default
// LV08 with its TCP factors. Private to topologies/src.
#pragma once

#include <utility>

#include "spmdsim/platform.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::topologies::detail {

// The platform `build` makes, run under that model.
template <class Build>
PlatformBuilder fabric_platform(Build build) {
  return PlatformBuilder(std::move(build), alpha_beta_config());
}

}  // namespace spmdsim::topologies::detail
