#include "spmdsim/topologies/fat_tree.hpp"

#include <memory>

#include <fmt/format.h>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::topologies {
namespace {

struct FatTreeLinks {
  detail::HostLinks host;
  std::vector<simgrid::s4u::Link*> device_up, device_down;
  // [lower level][lower * k + up port]: leaf -> spine or leaf -> aggregation, then aggregation -> core.
  std::vector<std::vector<simgrid::s4u::Link*>> up, down;
};

}  // namespace

std::string fat_tree_switch_name(int levels, FatTreeSwitch node) {
  static constexpr const char* kTwoLevels[] = {"leaf", "spine"};
  static constexpr const char* kThreeLevels[] = {"leaf", "agg", "core"};
  const char* kind = levels == 2 ? kTwoLevels[node.level] : kThreeLevels[node.level];
  return fmt::format("{}{}", kind, node.index);
}

std::vector<FatTreeSwitch> fat_tree_switches(int levels, int k, int from, int to) {
  if (from == to) return {};
  const int leaf_from = from / k;
  const int leaf_to = to / k;
  if (leaf_from == leaf_to) return {{0, leaf_from}};
  const int port0 = to % k;  // D-mod-k: the leaf's up port
  if (levels == 2) return {{0, leaf_from}, {1, port0}, {0, leaf_to}};
  const int pod_from = leaf_from / k;
  const int pod_to = leaf_to / k;
  if (pod_from == pod_to) return {{0, leaf_from}, {1, pod_from * k + port0}, {0, leaf_to}};
  const int port1 = (to / k) % k;  // the aggregation switch's up port
  return {{0, leaf_from}, {1, pod_from * k + port0}, {2, port0 * k + port1}, {1, pod_to * k + port0}, {0, leaf_to}};
}

PlatformBuilder fat_tree(FatTreeSpec spec) {
  if (spec.levels != 2 && spec.levels != 3)
    throw ValueError(fmt::format("fat tree: levels must be 2 or 3 (got {})", spec.levels));
  detail::check_at_least("fat tree", "k", spec.k, 2);
  long long capacity = 1;
  for (int l = 0; l < spec.levels; ++l) capacity *= spec.k;
  if (spec.num_devices < 2 || spec.num_devices > capacity)
    throw ValueError(fmt::format("fat tree: num_devices must be between 2 and k^levels = {}^{} = {} (got {})",
                                 spec.k, spec.levels, capacity, spec.num_devices));
  detail::check_link("fat tree device_link", spec.device_link);
  detail::check_link("fat tree switch_link", spec.switch_link);
  detail::check_link("fat tree host_link", spec.host_link);
  detail::check_device("fat tree device", spec.device);
  return detail::fabric_platform([spec] {
    const int p = spec.num_devices;
    const int k = spec.k;
    const int levels = spec.levels;
    auto links = std::make_shared<FatTreeLinks>();
    PathZone zone("fat_tree", [links, levels, k](int from, int to, detail::Route& route) {
      if (from == to || links->host.append_host_route(from, to, route)) return;
      const auto switches = fat_tree_switches(levels, k, from, to);
      route.push_back(links->device_up[static_cast<std::size_t>(from)]);
      for (std::size_t s = 0; s + 1 < switches.size(); ++s) {
        const auto a = switches[s];
        const auto b = switches[s + 1];
        const bool going_up = a.level < b.level;
        const auto lower = going_up ? a : b;
        const auto upper = going_up ? b : a;
        const auto index = static_cast<std::size_t>(lower.index) * static_cast<std::size_t>(k) +
                           static_cast<std::size_t>(upper.index % k);
        route.push_back((going_up ? links->up : links->down)[static_cast<std::size_t>(lower.level)][index]);
      }
      route.push_back(links->device_down[static_cast<std::size_t>(to)]);
    });
    Platform platform;
    platform.description =
        fmt::format("fat tree ({} levels, k = {}): {} x {}, device link {:g} GB/s, switch link {:g} GB/s, host "
                    "link {:g} GB/s",
                    levels, k, p, spec.device.model, spec.device_link.bandwidth / 1e9,
                    spec.switch_link.bandwidth / 1e9, spec.host_link.bandwidth / 1e9);
    detail::add_host_and_devices(zone, platform, p, spec.device, spec.host_link, spec.host_speed, links->host);
    for (int i = 0; i < p; ++i) {
      links->device_up.push_back(detail::add_link(zone, fmt::format("dev{}.fabric.up", i), spec.device_link));
      links->device_down.push_back(detail::add_link(zone, fmt::format("dev{}.fabric.down", i), spec.device_link));
    }
    // Populated switches only: leaves 0 .. leaves-1 and, with three levels, the pods holding them.
    const int leaves = (p + k - 1) / k;
    const int lower_counts[] = {leaves, ((leaves + k - 1) / k) * k};
    links->up.resize(static_cast<std::size_t>(levels - 1));
    links->down.resize(static_cast<std::size_t>(levels - 1));
    for (int level = 0; level + 1 < levels; ++level)
      for (int lower = 0; lower < lower_counts[level]; ++lower)
        for (int port = 0; port < k; ++port) {
          // The switch above `lower` on up port `port`.
          const int upper = levels == 2 ? port : level == 0 ? (lower / k) * k + port : (lower % k) * k + port;
          const auto name = fat_tree_switch_name(levels, {level, lower}) + "-" +
                            fat_tree_switch_name(levels, {level + 1, upper});
          links->up[static_cast<std::size_t>(level)].push_back(detail::add_link(zone, name + ".up", spec.switch_link));
          links->down[static_cast<std::size_t>(level)].push_back(
              detail::add_link(zone, name + ".down", spec.switch_link));
        }
    zone.seal();
    return platform;
  });
}

}  // namespace spmdsim::topologies
