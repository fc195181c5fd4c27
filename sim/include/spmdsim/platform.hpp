// What the engine needs to know of a platform: the host CPU that runs the host program and the devices,
// each a SimGrid host with its spec. Builders in topologies/ make one; sim/ never creates hosts or links.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "spmdsim/device_spec.hpp"

namespace spmdsim {

struct PlatformDevice {
  std::string name;
  simgrid::s4u::Host* host = nullptr;
  DeviceSpec spec;
  // The CPU whose host link reaches this device (its node's); null: the platform's host_cpu.
  simgrid::s4u::Host* host_cpu = nullptr;
};

struct Platform {
  std::string description;  // one line for reports, e.g. "switch: 8 x generic, PCIe 32 GB/s"
  simgrid::s4u::Host* host_cpu = nullptr;  // runs the host program
  std::vector<PlatformDevice> devices;
  // The devices' logical shape (mixed radix, dimension 0 varying fastest), e.g. {8 per node, 4 nodes} or a
  // torus {4, 4, 4}; empty means flat. Hierarchical and multi-dimensional collectives follow it.
  std::vector<int> dimensions;
};

// Called by Simulation once the SimGrid engine exists and is configured.
using PlatformBuilder = std::function<Platform()>;

}  // namespace spmdsim
