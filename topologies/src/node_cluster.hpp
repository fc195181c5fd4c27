// The engine behind accelerator_node() and multi_node_cluster(): the link tables, the pure route and the
// link names of a cluster of identical accelerator nodes (a lone node is a cluster of one without a network).
// Private to topologies/src; the drawings and the routing rules are in accelerator_node.hpp.
#pragma once

#include <string>
#include <vector>

#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"

namespace spmdsim::topologies::detail {

// The kinds of link a cluster has; a link is a kind and an index within the kind.
enum class ClusterLinkKind {
  host_memory,  // node n's host memory, shared by reads and writes: index n
  pcie_h2d,     // index: global device
  pcie_d2h,
  fabric_up,    // nvswitch: device -> switch port, index: global device
  fabric_down,  // nvswitch: switch -> device
  pair,         // full mesh: index (n * d + a) * d + b, device a -> device b of node n
  nic_up,       // device -> leaf or rail switch, index: global device
  nic_down,
  spine_up,     // leaf or rail switch s -> spine t: index s * num_spines + t
  spine_down,   // spine t -> leaf or rail switch s: same index
};
inline constexpr int kClusterLinkKinds = 10;

struct ClusterLink {
  ClusterLinkKind kind;
  int index;
  bool operator==(const ClusterLink&) const = default;
};

struct ClusterShape {
  std::string node_name;  // for the description
  bool lone_node = false;  // one node, no network, names without the "node{n}." prefix
  int num_nodes = 1;
  int devices_per_node = 1;
  NodeFabric fabric = NodeFabric::nvswitch;
  bool host_memory = true;  // whether host transfers cross a shared host-memory link
  ScaleOutNetwork network = ScaleOutNetwork::rail_optimized;
  RailCrossing rail_crossing = RailCrossing::nvlink_first;
  int nodes_per_leaf = 1;
  // Whether each node's NVSwitch reduces in the network (NVLink SHARP): a host "nvswitch" per node stands for
  // it, reached from the node's devices over their switch ports.
  bool reducing_switch = false;

  int num_devices() const { return num_nodes * devices_per_node; }
  int switch_endpoint(int node) const { return -1 - num_nodes - node; }
  // The node whose reducing switch `endpoint` is, or -1.
  int switch_node(int endpoint) const;
  // Leaf switches (fat tree) or rail switches (rail-optimised): the switches the NICs plug into.
  int num_edge_switches() const;
  // Spines: fat tree one per NIC port of a leaf; rail-optimised crossing at spines one per node; else 0.
  int num_spines() const;
};

// Endpoints: devices 0 .. N-1 (device k of node n is n * devices_per_node + k); node n's CPU is -1 - n; node
// n's reducing switch is switch_endpoint(n).
void cluster_route(const ClusterShape& shape, int from, int to, std::vector<ClusterLink>& route);
std::string cluster_link_name(const ClusterShape& shape, ClusterLink link);
// The names of the links cluster_route takes, in order.
std::vector<std::string> cluster_route_names(const ClusterShape& shape, int from, int to);
// "40 GB/s", or "not modelled" for a node without a host memory bandwidth, for platform descriptions.
std::string host_memory_text(const NodeSpec& node);

// Builds the platform: hosts, links and the PathZone routed by cluster_route. Specs already validated.
PlatformBuilder build_cluster(ClusterShape shape, NodeSpec node, LinkSpec switch_link, std::string description);

// Throws ValueError "<what>: ..." for a bad node spec.
void check_node(const std::string& what, const NodeSpec& node);
ClusterShape node_shape(const NodeSpec& node);

}  // namespace spmdsim::topologies::detail
