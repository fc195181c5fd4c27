#include "spmdsim/topologies/ring.hpp"

#include <memory>

#include <fmt/format.h>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"

namespace spmdsim::topologies {
namespace {

struct RingLinks {
  detail::HostLinks host;
  std::vector<simgrid::s4u::Link*> next, prev;  // by device; prev is empty for p = 2
};

}  // namespace

RingPath ring_path(int size, int from, int to) {
  const int forward = ((to - from) % size + size) % size;
  const int backward = size - forward;
  if (forward <= backward) return {+1, forward};
  return {-1, backward};
}

PlatformBuilder ring(RingSpec spec) {
  detail::check_at_least("ring", "num_devices", spec.num_devices, 2);
  detail::check_link("ring device_link", spec.device_link);
  detail::check_link("ring host_link", spec.host_link);
  detail::check_device("ring device", spec.device);
  return detail::fabric_platform([spec] {
    const int p = spec.num_devices;
    auto links = std::make_shared<RingLinks>();
    PathZone zone("ring", [links, p](int from, int to, detail::Route& route) {
      if (from == to || links->host.append_host_route(from, to, route)) return;
      const auto path = ring_path(p, from, to);
      const auto& hop_links = path.direction > 0 ? links->next : links->prev;
      for (int h = 0, at = from; h < path.hops; ++h, at = (at + path.direction + p) % p)
        route.push_back(hop_links[static_cast<std::size_t>(at)]);
    });
    Platform platform;
    platform.description = fmt::format("ring: {} x {}, device link {:g} GB/s, host link {:g} GB/s", p,
                                       spec.device.model, spec.device_link.bandwidth / 1e9,
                                       spec.host_link.bandwidth / 1e9);
    detail::add_host_and_devices(zone, platform, p, spec.device, spec.host_link, spec.host_speed, links->host);
    for (int i = 0; i < p; ++i) {
      links->next.push_back(detail::add_link(zone, fmt::format("dev{}.next", i), spec.device_link));
      // With two devices next and prev would be a second, parallel cable: a tie goes forward, so skip it.
      if (p > 2) links->prev.push_back(detail::add_link(zone, fmt::format("dev{}.prev", i), spec.device_link));
    }
    zone.seal();
    return platform;
  });
}

}  // namespace spmdsim::topologies
