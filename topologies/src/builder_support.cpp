#include "builder_support.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "spmdsim/errors.hpp"

namespace spmdsim::topologies::detail {

void add_host_and_devices(PathZone& zone, Platform& platform, int num_devices, const DeviceSpec& device,
                          const LinkSpec& host_link, double host_speed, HostLinks& links) {
  platform.host_cpu = zone.add_host("host", host_speed, -1)->get_name();
  links.h2d.reserve(static_cast<std::size_t>(num_devices));
  links.d2h.reserve(static_cast<std::size_t>(num_devices));
  for (int i = 0; i < num_devices; ++i) {
    const std::string name = fmt::format("dev{}", i);
    platform.devices.push_back({name, zone.add_host(name, kDeviceHostSpeed, i)->get_name(), device});
    links.h2d.push_back(add_link(zone, name + ".pcie.h2d", host_link));
    links.d2h.push_back(add_link(zone, name + ".pcie.d2h", host_link));
  }
}

simgrid::s4u::Link* add_link(PathZone& zone, const std::string& name, const LinkSpec& spec) {
  return zone.add_link(name, spec.bandwidth, spec.latency);
}

void check_device(const std::string& what, const DeviceSpec& device) {
  try {
    device.validate();
  } catch (const std::invalid_argument& error) {
    throw ValueError(fmt::format("{}: {}", what, error.what()));
  }
}

void check_at_least(const std::string& what, const char* field, long long value, long long minimum) {
  if (value < minimum)
    throw ValueError(fmt::format("{}: {} must be at least {} (got {})", what, field, minimum, value));
}

void check_link(const std::string& what, const LinkSpec& link) { topologies::check_link(what.c_str(), link); }

}  // namespace spmdsim::topologies::detail
