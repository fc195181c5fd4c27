// What the engine needs to know of a platform: the host CPU that runs the host program and the devices,
// each a SimGrid host with its spec. Builders in topologies/ make one; sim/ never creates hosts or links.
// Hosts are named, not handed over: sim/ resolves the names to its engine's hosts, so that no SimGrid type
// crosses this header.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "spmdsim/device_spec.hpp"

namespace spmdsim {

struct PlatformDevice {
  std::string name;
  std::string host;  // the SimGrid host that runs the device
  DeviceSpec spec;
  // The CPU host whose host link reaches this device (its node's); empty: the platform's host_cpu.
  std::string host_cpu;
};

struct Platform {
  std::string description;  // one line for reports, e.g. "switch: 8 x generic, PCIe 32 GB/s"
  std::string host_cpu;  // the SimGrid host that runs the host program
  std::vector<PlatformDevice> devices;
  // The devices' logical shape (mixed radix, dimension 0 varying fastest), e.g. {8 per node, 4 nodes} or a
  // torus {4, 4, 4}; empty means flat. Hierarchical and multi-dimensional collectives follow it.
  std::vector<int> dimensions;
};

// Called by Simulation once the SimGrid engine exists and is configured.
using PlatformBuilder = std::function<Platform()>;

}  // namespace spmdsim
