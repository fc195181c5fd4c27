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

std::optional<NcclNode> platform_nccl(const NodeSpec& node) {
  std::optional<NcclNode> nccl = node.nccl;
  if (nccl) nccl->net_bandwidth = node.devices_per_node * node.nic.bandwidth;
  return nccl;
}

PlatformBuilder accelerator_node(NodeSpec node) {
  detail::check_node(fmt::format("accelerator node '{}'", node.name), node);
  auto description = fmt::format("{}: {} x {}, {}, host link {:g} GB/s, host memory {}", node.name,
                                 node.devices_per_node, node.device.model, fabric_text(node),
                                 node.host_link.bandwidth / 1e9, detail::host_memory_text(node));
  return detail::build_cluster(lone_node_shape(node), node, {}, std::move(description));
}

std::vector<std::string> accelerator_node_route(const NodeSpec& node, int from, int to) {
  return detail::cluster_route_names(lone_node_shape(node), from, to);
}

}  // namespace spmdsim::topologies
