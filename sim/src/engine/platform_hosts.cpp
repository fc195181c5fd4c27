#include "engine/platform_hosts.hpp"

#include <string>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::detail {
namespace {

simgrid::s4u::Host* host_named(const std::string& name, const std::string& role) {
  auto* host = simgrid::s4u::Host::by_name_or_null(name);
  if (host == nullptr)
    throw ValueError(fmt::format("the platform names {} '{}', which is no host of it", role, name));
  return host;
}

}  // namespace

PlatformHosts::PlatformHosts(const Platform& platform) {
  for (const auto& device : platform.devices) {
    devices_.push_back(host_named(device.host, "the host of device " + device.name));
    host_cpus_.push_back(host_named(device.host_cpu, "the host CPU of device " + device.name));
    reducing_switches_.push_back(device.reducing_switch.empty()
                                     ? nullptr
                                     : host_named(device.reducing_switch, "the switch of device " + device.name));
  }
}

}  // namespace spmdsim::detail
