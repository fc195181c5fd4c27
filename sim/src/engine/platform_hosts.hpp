// The platform's hosts as the engine's SimGrid hosts: the Platform names them (platform.hpp), and they are
// resolved once, when the platform has been built, so that nothing looks a name up while simulating.
#pragma once

#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "spmdsim/platform.hpp"

namespace spmdsim::detail {

class PlatformHosts {
 public:
  PlatformHosts() = default;
  // ValueError for a name that is no host of the engine. Every device's host_cpu must be set.
  explicit PlatformHosts(const Platform& platform);

  // The host that runs device `device`.
  simgrid::s4u::Host* device(int device) const { return devices_.at(static_cast<std::size_t>(device)); }
  // The CPU whose host link reaches device `device`.
  simgrid::s4u::Host* host_cpu(int device) const { return host_cpus_.at(static_cast<std::size_t>(device)); }
  // The reducing switch of device `device`'s node (PlatformDevice::reducing_switch), or nullptr.
  simgrid::s4u::Host* reducing_switch(int device) const {
    return reducing_switches_.at(static_cast<std::size_t>(device));
  }

 private:
  std::vector<simgrid::s4u::Host*> devices_;
  std::vector<simgrid::s4u::Host*> host_cpus_;
  std::vector<simgrid::s4u::Host*> reducing_switches_;
};

}  // namespace spmdsim::detail
