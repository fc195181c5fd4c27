// Accelerator nodes and clusters of them: the machines users rent (DGX/HGX, MI300X boxes) and the
// scale-out networks that join them. Builders live in accelerator_node.cpp and multi_node.cpp.
#pragma once

#include <string>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::topologies {

enum class NodeFabric {
  nvswitch,   // every device on a non-blocking switch (NVLink + NVSwitch): device_link is the device's port
  full_mesh,  // a direct link between every pair (MI300X Infinity Fabric): device_link is one pair's link
};

struct NodeSpec {
  std::string name = "node";
  int devices_per_node = 8;
  DeviceSpec device;
  NodeFabric fabric = NodeFabric::nvswitch;
  LinkSpec device_link;
  LinkSpec host_link;                     // PCIe, per device
  BytesPerSecond host_memory_bandwidth = 0;  // the CPU's memory, shared by all its devices' host transfers
  LinkSpec nic;                           // per device, to the scale-out network
  FlopsPerSecond host_speed = 1e11;
};

// One node: dimensions {devices_per_node}.
PlatformBuilder accelerator_node(NodeSpec node);

enum class ScaleOutNetwork {
  fat_tree,        // NICs on leaf switches joined by spines (two-level fat tree)
  rail_optimized,  // NIC k of every node on rail switch k; rails joined by spines
};

struct MultiNodeSpec {
  NodeSpec node;
  int num_nodes = 2;
  ScaleOutNetwork network = ScaleOutNetwork::rail_optimized;
  LinkSpec switch_link;  // leaf/rail switch <-> spine, per direction
  int nodes_per_leaf = 4;  // fat tree: how many nodes' NICs one leaf switch takes
};

// Nodes joined by a scale-out network; each node has its own host CPU. dimensions {devices_per_node,
// num_nodes}.
PlatformBuilder multi_node_cluster(MultiNodeSpec spec);

}  // namespace spmdsim::topologies
