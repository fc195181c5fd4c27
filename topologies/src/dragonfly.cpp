#include "spmdsim/topologies/dragonfly.hpp"

#include <limits>
#include <memory>

#include <fmt/format.h>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::topologies {
namespace {

struct DragonflyLinks {
  detail::HostLinks host;
  std::vector<simgrid::s4u::Link*> device_up, device_down;
  std::vector<simgrid::s4u::Link*> local;   // [(g * a + from) * a + to], null on the diagonal
  std::vector<simgrid::s4u::Link*> global;  // [g * G + h], null on the diagonal
};

}  // namespace

int dragonfly_gateway(int num_groups, int routers_per_group, int group, int other_group) {
  const int offset = ((other_group - group) % num_groups + num_groups) % num_groups;
  return (offset - 1) % routers_per_group;
}

std::vector<int> dragonfly_routers(const DragonflySpec& spec, int from, int to) {
  if (from == to) return {};
  const int a = spec.routers_per_group;
  const int router_from = from / spec.devices_per_router;
  const int router_to = to / spec.devices_per_router;
  if (router_from == router_to) return {router_from};
  const int group_from = router_from / a;
  const int group_to = router_to / a;
  if (group_from == group_to) return {router_from, router_to};
  std::vector<int> routers{router_from};
  const int exit = group_from * a + dragonfly_gateway(spec.num_groups, a, group_from, group_to);
  const int entry = group_to * a + dragonfly_gateway(spec.num_groups, a, group_to, group_from);
  if (exit != router_from) routers.push_back(exit);
  routers.push_back(entry);
  if (entry != router_to) routers.push_back(router_to);
  return routers;
}

PlatformBuilder dragonfly(DragonflySpec spec) {
  detail::check_at_least("dragonfly", "num_groups", spec.num_groups, 2);
  detail::check_at_least("dragonfly", "routers_per_group", spec.routers_per_group, 1);
  detail::check_at_least("dragonfly", "devices_per_router", spec.devices_per_router, 1);
  const long long devices =
      static_cast<long long>(spec.num_groups) * spec.routers_per_group * spec.devices_per_router;
  if (devices > std::numeric_limits<int>::max())
    throw ValueError(fmt::format(
        "dragonfly: num_groups x routers_per_group x devices_per_router must be at most {} devices (got {})",
        std::numeric_limits<int>::max(), devices));
  detail::check_link("dragonfly device_link", spec.device_link);
  detail::check_link("dragonfly local_link", spec.local_link);
  detail::check_link("dragonfly global_link", spec.global_link);
  detail::check_link("dragonfly host_link", spec.host_link);
  detail::check_device("dragonfly device", spec.device);
  return detail::fabric_platform([spec] {
    const int G = spec.num_groups;
    const int a = spec.routers_per_group;
    const int p = G * a * spec.devices_per_router;
    auto links = std::make_shared<DragonflyLinks>();
    PathZone zone("dragonfly", [links, spec, G, a](int from, int to, detail::Route& route) {
      if (from == to || links->host.append_host_route(from, to, route)) return;
      const auto routers = dragonfly_routers(spec, from, to);
      route.push_back(links->device_up[static_cast<std::size_t>(from)]);
      for (std::size_t r = 0; r + 1 < routers.size(); ++r) {
        const int x = routers[r];
        const int y = routers[r + 1];
        if (x / a == y / a) route.push_back(links->local[static_cast<std::size_t>(x * a + y % a)]);
        else route.push_back(links->global[static_cast<std::size_t>((x / a) * G + y / a)]);
      }
      route.push_back(links->device_down[static_cast<std::size_t>(to)]);
    });
    Platform platform;
    platform.description = fmt::format(
        "dragonfly ({} groups x {} routers x {} devices): {} x {}, device link {:g} GB/s, local link {:g} GB/s, "
        "global link {:g} GB/s, host link {:g} GB/s",
        G, a, spec.devices_per_router, p, spec.device.model, spec.device_link.bandwidth / 1e9,
        spec.local_link.bandwidth / 1e9, spec.global_link.bandwidth / 1e9, spec.host_link.bandwidth / 1e9);
    platform.dimensions = {a * spec.devices_per_router, G};
    detail::add_host_and_devices(zone, platform, p, spec.device, spec.host_link, spec.host_speed, links->host);
    for (int i = 0; i < p; ++i) {
      links->device_up.push_back(detail::add_link(zone, fmt::format("dev{}.fabric.up", i), spec.device_link));
      links->device_down.push_back(detail::add_link(zone, fmt::format("dev{}.fabric.down", i), spec.device_link));
    }
    links->local.assign(static_cast<std::size_t>(G) * static_cast<std::size_t>(a) * static_cast<std::size_t>(a),
                        nullptr);
    for (int g = 0; g < G; ++g)
      for (int x = 0; x < a; ++x)
        for (int y = 0; y < a; ++y)
          if (x != y)
            links->local[static_cast<std::size_t>((g * a + x) * a + y)] =
                detail::add_link(zone, fmt::format("group{}.r{}-r{}", g, x, y), spec.local_link);
    links->global.assign(static_cast<std::size_t>(G) * static_cast<std::size_t>(G), nullptr);
    for (int g = 0; g < G; ++g)
      for (int h = 0; h < G; ++h)
        if (g != h)
          links->global[static_cast<std::size_t>(g * G + h)] =
              detail::add_link(zone, fmt::format("group{}-group{}", g, h), spec.global_link);
    zone.seal();
    return platform;
  });
}

}  // namespace spmdsim::topologies
