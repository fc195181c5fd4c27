#include "spmdsim/topologies/full_mesh.hpp"

#include <memory>

#include <fmt/format.h>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::topologies {
namespace {

struct MeshLinks {
  detail::HostLinks host;
  std::vector<simgrid::s4u::Link*> pair;  // [from * p + to]; null on the diagonal
};

}  // namespace

PlatformBuilder full_mesh(FullMeshSpec spec) {
  detail::check_at_least("full mesh", "num_devices", spec.num_devices, 2);
  if (spec.num_devices > kMaxFullMeshDevices) {
    const long long p = spec.num_devices;
    throw ValueError(fmt::format(
        "full mesh: num_devices must be at most {} (got {}): a link per ordered pair of devices makes p(p-1) "
        "= {} links; use a switch, fat tree or dragonfly instead",
        kMaxFullMeshDevices, p, p * (p - 1)));
  }
  detail::check_link("full mesh device_link", spec.device_link);
  detail::check_link("full mesh host_link", spec.host_link);
  detail::check_device("full mesh device", spec.device);
  return detail::fabric_platform([spec] {
    const int p = spec.num_devices;
    auto links = std::make_shared<MeshLinks>();
    PathZone zone("full_mesh", [links, p](int from, int to, detail::Route& route) {
      if (from == to || links->host.append_host_route(from, to, route)) return;
      route.push_back(links->pair[static_cast<std::size_t>(from) * static_cast<std::size_t>(p) +
                                  static_cast<std::size_t>(to)]);
    });
    Platform platform;
    platform.description = fmt::format("full mesh: {} x {}, pair link {:g} GB/s, host link {:g} GB/s", p,
                                       spec.device.model, spec.device_link.bandwidth / 1e9,
                                       spec.host_link.bandwidth / 1e9);
    detail::add_host_and_devices(zone, platform, p, spec.device, spec.host_link, spec.host_speed, links->host);
    links->pair.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(p), nullptr);
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j)
        if (i != j)
          links->pair[static_cast<std::size_t>(i) * static_cast<std::size_t>(p) + static_cast<std::size_t>(j)] =
              detail::add_link(zone, fmt::format("dev{}-dev{}", i, j), spec.device_link);
    zone.seal();
    platform.full_mesh_nodes = true;
    return platform;
  });
}

}  // namespace spmdsim::topologies
