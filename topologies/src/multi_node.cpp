// Accelerator nodes joined by a scale-out network (fat tree or rail-optimised); the drawings and the routes
// are in accelerator_node.hpp, the engine shared with accelerator_node in node_cluster.cpp.
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "builder_support.hpp"
#include "node_cluster.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"

namespace spmdsim::topologies {
namespace {

detail::ClusterShape cluster_shape(const MultiNodeSpec& spec) {
  auto shape = detail::node_shape(spec.node);
  shape.num_nodes = spec.num_nodes;
  shape.network = spec.network;
  shape.rail_crossing = spec.rail_crossing;
  shape.nodes_per_leaf = spec.nodes_per_leaf;
  return shape;
}

std::string network_text(const MultiNodeSpec& spec) {
  if (spec.network == ScaleOutNetwork::fat_tree)
    return fmt::format("fat tree ({} nodes per leaf, switch link {:g} GB/s)", spec.nodes_per_leaf,
                       spec.switch_link.bandwidth / 1e9);
  if (spec.rail_crossing == RailCrossing::spine)
    return fmt::format("rail-optimised, other rails via spines (switch link {:g} GB/s)",
                       spec.switch_link.bandwidth / 1e9);
  return "rail-optimised, other rails via the node fabric first (PXN)";
}

}  // namespace

MultiNodeSpec library_cluster_spec(NodeSpec node, int num_nodes) {
  MultiNodeSpec spec{.node = std::move(node), .num_nodes = num_nodes};
  const long long ranks = static_cast<long long>(num_nodes) * spec.node.devices_per_node;
  if (spec.node.rccl && ranks < spec.node.rccl->pxn_min_ranks) {
    spec.rail_crossing = RailCrossing::spine;
    spec.switch_link = spec.node.nic;
  }
  return spec;
}

PlatformBuilder multi_node_cluster(MultiNodeSpec spec) {
  const std::string what = "multi-node cluster";
  detail::check_at_least(what, "num_nodes", spec.num_nodes, 1);
  if (spec.network != ScaleOutNetwork::fat_tree && spec.network != ScaleOutNetwork::rail_optimized)
    throw ValueError(fmt::format("{}: network must be fat_tree or rail_optimized (got {})", what,
                                 static_cast<int>(spec.network)));
  if (spec.rail_crossing != RailCrossing::nvlink_first && spec.rail_crossing != RailCrossing::spine)
    throw ValueError(fmt::format("{}: rail_crossing must be nvlink_first or spine (got {})", what,
                                 static_cast<int>(spec.rail_crossing)));
  if (spec.network == ScaleOutNetwork::fat_tree) detail::check_at_least(what, "nodes_per_leaf", spec.nodes_per_leaf, 1);
  detail::check_node(fmt::format("{} node '{}'", what, spec.node.name), spec.node);
  const long long devices = static_cast<long long>(spec.num_nodes) * spec.node.devices_per_node;
  if (devices > std::numeric_limits<int>::max())
    throw ValueError(fmt::format("{}: num_nodes x devices_per_node must be at most {} devices (got {})", what,
                                 std::numeric_limits<int>::max(), devices));
  const auto shape = cluster_shape(spec);
  if (spec.network == ScaleOutNetwork::fat_tree || spec.rail_crossing == RailCrossing::spine)
    detail::check_link(what + " switch_link", spec.switch_link);
  const auto& node = spec.node;
  auto description = fmt::format(
      "{} x {} ({} x {}, {} {:g} GB/s, host memory {}), NIC {:g} GB/s, {}", spec.num_nodes, node.name,
      node.devices_per_node, node.device.model, node.fabric == NodeFabric::nvswitch ? "nvswitch port" : "mesh pair link",
      node.device_link.bandwidth / 1e9, detail::host_memory_text(node), node.nic.bandwidth / 1e9, network_text(spec));
  return detail::build_cluster(shape, node, spec.switch_link, std::move(description));
}

std::vector<std::string> multi_node_route(const MultiNodeSpec& spec, int from, int to) {
  return detail::cluster_route_names(cluster_shape(spec), from, to);
}

}  // namespace spmdsim::topologies
