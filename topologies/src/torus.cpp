#include "spmdsim/topologies/torus.hpp"

#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/topologies/ring.hpp"

namespace spmdsim::topologies {
namespace {

constexpr const char* kDimensionNames[] = {"x", "y", "z"};

struct TorusLinks {
  detail::HostLinks host;
  // [dimension][device]: the link leaving the device in the + (or -) direction; null where there is none.
  std::vector<std::vector<simgrid::s4u::Link*>> plus, minus;
};

std::string shape_string(const std::vector<int>& shape) { return fmt::format("{}", fmt::join(shape, "x")); }

}  // namespace

std::vector<int> torus_coordinates(const std::vector<int>& shape, int index) {
  std::vector<int> coordinates(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    coordinates[d] = index % shape[d];
    index /= shape[d];
  }
  return coordinates;
}

int torus_index(const std::vector<int>& shape, const std::vector<int>& coordinates) {
  int index = 0;
  for (std::size_t d = shape.size(); d-- > 0;) index = index * shape[d] + coordinates[d];
  return index;
}

std::vector<TorusHop> torus_route(const std::vector<int>& shape, int from, int to, bool wraparound) {
  std::vector<TorusHop> hops;
  auto at = torus_coordinates(shape, from);
  const auto target = torus_coordinates(shape, to);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto path = wraparound ? ring_path(shape[d], at[d], target[d])
                                 : RingPath{target[d] >= at[d] ? +1 : -1, std::abs(target[d] - at[d])};
    for (int h = 0; h < path.hops; ++h) {
      hops.push_back({torus_index(shape, at), static_cast<int>(d), path.direction});
      at[d] = (at[d] + path.direction + shape[d]) % shape[d];
    }
  }
  return hops;
}

PlatformBuilder torus(TorusSpec spec) {
  if (spec.shape.size() != 2 && spec.shape.size() != 3)
    throw ValueError(fmt::format("torus: shape must have 2 or 3 dimensions (got {}: {})", spec.shape.size(),
                                 shape_string(spec.shape)));
  long long product = 1;
  for (int size : spec.shape) {
    if (size < 1)
      throw ValueError(fmt::format("torus: every shape entry must be at least 1 (got {})", shape_string(spec.shape)));
    product *= size;
  }
  if (product != spec.num_devices)
    throw ValueError(fmt::format("torus: shape {} has {} devices but num_devices is {}", shape_string(spec.shape),
                                 product, spec.num_devices));
  detail::check_at_least("torus", "num_devices", spec.num_devices, 2);
  detail::check_link("torus device_link", spec.device_link);
  detail::check_link("torus host_link", spec.host_link);
  detail::check_device("torus device", spec.device);
  return detail::fabric_platform([spec] {
    const int p = spec.num_devices;
    const auto& shape = spec.shape;
    const bool wraparound = spec.wraparound;
    auto links = std::make_shared<TorusLinks>();
    PathZone zone("torus", [links, shape, wraparound](int from, int to, detail::Route& route) {
      if (from == to || links->host.append_host_route(from, to, route)) return;
      for (const auto& hop : torus_route(shape, from, to, wraparound)) {
        const auto& by_device = hop.direction > 0 ? links->plus : links->minus;
        route.push_back(by_device[static_cast<std::size_t>(hop.dimension)][static_cast<std::size_t>(hop.device)]);
      }
    });
    Platform platform;
    platform.description = fmt::format("{} {}: {} x {}, device link {:g} GB/s, host link {:g} GB/s",
                                       wraparound ? "torus" : "mesh", shape_string(shape), p, spec.device.model,
                                       spec.device_link.bandwidth / 1e9, spec.host_link.bandwidth / 1e9);
    platform.dimensions = shape;
    platform.torus = true;
    platform.torus_wraparound = wraparound;
    detail::add_host_and_devices(zone, platform, p, spec.device, spec.host_link, spec.host_speed, links->host);
    links->plus.assign(shape.size(), std::vector<simgrid::s4u::Link*>(static_cast<std::size_t>(p), nullptr));
    links->minus.assign(shape.size(), std::vector<simgrid::s4u::Link*>(static_cast<std::size_t>(p), nullptr));
    for (int i = 0; i < p; ++i) {
      const auto at = torus_coordinates(shape, i);
      for (std::size_t d = 0; d < shape.size(); ++d) {
        // Torus: a dimension of size 2 has one cable between its two devices, whose directions are the +
        // links of both (ties go +, so no route needs a - link); size 1 has no neighbour. Mesh: no link
        // leaves the grid.
        const bool has_plus = wraparound ? shape[d] >= 2 : at[d] + 1 < shape[d];
        const bool has_minus = wraparound ? shape[d] >= 3 : at[d] > 0;
        const auto name = fmt::format("dev{}.{}", i, kDimensionNames[d]);
        if (has_plus) links->plus[d][static_cast<std::size_t>(i)] = detail::add_link(zone, name + "+", spec.device_link);
        if (has_minus)
          links->minus[d][static_cast<std::size_t>(i)] = detail::add_link(zone, name + "-", spec.device_link);
      }
    }
    zone.seal();
    return platform;
  });
}

}  // namespace spmdsim::topologies
