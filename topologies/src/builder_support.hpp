// What the single-host builders (ring, full mesh, torus, fat tree, dragonfly) share: one host CPU (endpoint
// -1) and devices dev0..dev{n-1} (endpoints 0..n-1), each device on its own PCIe-like link pair to the CPU,
// as in switch_cluster. Private to topologies/src.
//
//            host CPU            host -> dev i : dev{i}.pcie.h2d
//      pcie /   |    \ pcie      dev i -> host : dev{i}.pcie.d2h
//        dev0 dev1 ... dev{n-1}  dev i -> dev j: the topology's own links
#pragma once

#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "path_zone.hpp"
#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies::detail {

// A device's SimGrid speed only converts its roofline time into an amount of work; any value will do.
inline constexpr double kDeviceHostSpeed = 1e12;

using Route = std::vector<simgrid::s4u::Link*>;

// The host side of a single-host platform.
struct HostLinks {
  std::vector<simgrid::s4u::Link*> h2d, d2h;

  // A route with the host CPU at one end: appends its one PCIe link and returns true; false otherwise.
  bool append_host_route(int from, int to, Route& route) const {
    if (from < 0) route.push_back(h2d[static_cast<std::size_t>(to)]);
    else if (to < 0) route.push_back(d2h[static_cast<std::size_t>(from)]);
    else return false;
    return true;
  }
};

// Adds the host CPU "host" and the devices "dev{i}" with their PCIe links to `zone` and `platform`.
void add_host_and_devices(PathZone& zone, Platform& platform, int num_devices, const DeviceSpec& device,
                          const LinkSpec& host_link, double host_speed, HostLinks& links);

// One SimGrid link of `spec` (one direction of a full-duplex cable).
simgrid::s4u::Link* add_link(PathZone& zone, const std::string& name, const LinkSpec& spec);

// Throws ValueError "<what>: <DeviceSpec::validate's message>" for a bad device spec.
void check_device(const std::string& what, const DeviceSpec& device);
// Throws ValueError "<what>: <field> must be at least <minimum> (got <value>)".
void check_at_least(const std::string& what, const char* field, long long value, long long minimum);
// check_link with a std::string name.
void check_link(const std::string& what, const LinkSpec& link);

}  // namespace spmdsim::topologies::detail
