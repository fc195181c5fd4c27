// One accelerator node (DGX/HGX on NVSwitch, MI300X on an Infinity Fabric mesh); the drawing and the routes
// are in accelerator_node.hpp, the engine shared with multi_node_cluster in node_cluster.cpp.
#include <fmt/format.h>

#include "node_cluster.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"

namespace spmdsim::topologies {
namespace {

detail::ClusterShape lone_node_shape(const NodeSpec& node) {
  auto shape = detail::node_shape(node);
  shape.lone_node = true;
  return shape;
}

std::string fabric_text(const NodeSpec& node) {
  return fmt::format("{} {:g} GB/s", node.fabric == NodeFabric::nvswitch ? "nvswitch port" : "full mesh pair link",
                     node.device_link.bandwidth / 1e9);
}

}  // namespace

PlatformBuilder accelerator_node(NodeSpec node) {
  detail::check_node(fmt::format("accelerator node '{}'", node.name), node);
  const std::string host_memory =
      node.host_memory_bandwidth > 0 ? fmt::format("{:g} GB/s", node.host_memory_bandwidth / 1e9) : "not modelled";
  auto description = fmt::format("{}: {} x {}, {}, host link {:g} GB/s, host memory {}", node.name,
                                 node.devices_per_node, node.device.model, fabric_text(node),
                                 node.host_link.bandwidth / 1e9, host_memory);
  return detail::build_cluster(lone_node_shape(node), node, {}, std::move(description));
}

std::vector<std::string> accelerator_node_route(const NodeSpec& node, int from, int to) {
  const auto shape = lone_node_shape(node);
  std::vector<detail::ClusterLink> links;
  detail::cluster_route(shape, from, to, links);
  std::vector<std::string> names;
  for (const auto& link : links) names.push_back(detail::cluster_link_name(shape, link));
  return names;
}

}  // namespace spmdsim::topologies
