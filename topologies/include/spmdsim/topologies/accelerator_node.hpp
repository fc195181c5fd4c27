// Accelerator nodes and clusters of them: the machines users rent (DGX/HGX, MI300X boxes) and the
// scale-out networks that join them. Builders live in accelerator_node.cpp and multi_node.cpp.
//
// One node (accelerator_node), d = devices_per_node:
//
//                          host CPU "host"
//                              |
//                         host memory             "hostmem": ONE link of host_memory_bandwidth, shared by
//                       /      |      \           every device's host transfers in both directions (a
//               pcie   /       |       \  pcie    CPU's memory bandwidth is one pool for reads and writes)
//                   dev0     dev1 ... dev{d-1}    dev{k}.pcie.h2d / dev{k}.pcie.d2h
//                   |  nic   |  nic     |  nic    dev{k}.nic.up / .down: to the scale-out network (none on
//                   |        |          |         a lone node: no route crosses them there)
//               +-------------------------------+
//               | nvswitch: one non-blocking    |  dev{k}.fabric.up / .down: the device's switch port
//               | switch;  full_mesh: a cable   |  dev{a}-dev{b}: the cable from a to b (full_mesh)
//               | between every pair            |
//               +-------------------------------+
//
//   host -> dev k  : hostmem, dev{k}.pcie.h2d          dev k -> host : dev{k}.pcie.d2h, hostmem
//   dev a -> dev b : dev{a}.fabric.up, dev{b}.fabric.down  (nvswitch)  or  dev{a}-dev{b}  (full_mesh)
//
// host_memory_bandwidth = 0 means "not modelled" (presets without a published figure): no hostmem link,
// host transfers cross their PCIe link alone. Platform::dimensions = {devices_per_node}.
//
// An nvswitch node whose NCCL figures say the switch reduces (NVLink SHARP: NcclNode::nvls_efficiency > 0)
// also has a host "nvswitch" standing for the switch (PlatformDevice::reducing_switch), for NVLS:
//   dev k -> nvswitch : dev{k}.fabric.up          nvswitch -> dev k : dev{k}.fabric.down
//
// A cluster (multi_node_cluster): nodes as above, node n's names prefixed "node{n}." (node1.host,
// node1.hostmem, node1.dev3, node1.dev3.pcie.h2d, ...); device k of node n is device n*d + k of the platform,
// its host CPU (PlatformDevice::host_cpu) node n's; Platform::host_cpu is node 0's.
// Platform::dimensions = {devices_per_node, num_nodes}. Traffic between devices of one node stays on the
// node fabric; between nodes it leaves through NICs:
//
//   rail_optimized: rail switch k takes NIC k of every node.     fat_tree: leaf l takes the NICs of nodes
//                                                                 l*m .. l*m+m-1 (m = nodes_per_leaf);
//        rail0          rail1     ...   rail{d-1}                 m*d spines, each cabled to every leaf:
//       /  |   \       /  |   \                                          spine0 ... spine{m*d-1}
//   n0.dev0 n1.dev0 .. n0.dev1 n1.dev1 ..                                   |||   \\\   (leaf{l}-spine{s})
//                                                                     leaf0     leaf1   ...
//                                                                    / ... \   / ... \  (NICs)
//
//   same rail, node0.dev3 -> node1.dev3 : node0.dev3.nic.up, node1.dev3.nic.down
//   other rail, node0.dev3 -> node1.dev5, rail_crossing = nvlink_first (NCCL's PXN: the message first moves
//     over the node fabric to the source node's GPU on the destination's rail, which sends it on its rail):
//       node0.dev3.fabric.up, node0.dev5.fabric.down, node0.dev5.nic.up, node1.dev5.nic.down
//   other rail, rail_crossing = spine (rails joined by num_nodes spines; spine = destination node, D-mod-k):
//       node0.dev3.nic.up, rail3-spine1.up, rail5-spine1.down, node1.dev5.nic.down
//   fat tree, same leaf: nic.up, nic.down; other leaf, node0.dev3 -> node{j}.dev{k} on leaf l:
//       node0.dev3.nic.up, leaf0-spine{s}.up, leaf{l}-spine{s}.down, node{j}.dev{k}.nic.down
//     with s = (j mod m) * d + k, the destination NIC's port on its leaf (D-mod-k: one spine per
//     destination, so a spine's down link carries traffic for one NIC only).
//
// A route is one SimGrid flow over all its links (no store-and-forward): the PXN relay costs the fabric
// links' latency and shares their bandwidth, as NCCL's proxy copy does. A CPU talking to another node
// (spmdsim never does) is routed through its node's device on the destination's rail: CPU n -> node m's dev
// k: node{n}.hostmem, node{n}.dev{k}.pcie.h2d, then that device's network route.
// Links: O(devices) for nvswitch nodes and every network; full_mesh nodes add d(d-1) per node.
#pragma once

#include <optional>
#include <string>
#include <vector>

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
                                             // (both directions); 0: not modelled
  LinkSpec nic;                           // per device, to the scale-out network
  FlopsPerSecond host_speed = 1e11;
  // NCCL's figures for the node (Platform::nccl; its net_bandwidth is filled from the NICs), where NCCL drives
  // it.
  std::optional<NcclNode> nccl;
  // RCCL's figures for the node (Platform::rccl), where RCCL drives it.
  std::optional<RcclNode> rccl;
};

// NCCL's figures for the node as its platforms carry them (Platform::nccl): node.nccl with net_bandwidth its
// NICs together; nullopt where NCCL does not drive it.
std::optional<NcclNode> platform_nccl(const NodeSpec& node);

// One node: dimensions {devices_per_node}. Throws ValueError naming the first bad field: fewer than 1
// device, a bad link, a host_memory_bandwidth that is negative or not finite, a bad device spec.
PlatformBuilder accelerator_node(NodeSpec node);

enum class ScaleOutNetwork {
  fat_tree,        // NICs on leaf switches joined by spines (two-level fat tree)
  rail_optimized,  // NIC k of every node on rail switch k; rails joined by spines if rail_crossing is spine
};

// Rail-optimised networks: how a message reaches a NIC on another rail.
enum class RailCrossing {
  nvlink_first,  // over the source node's fabric to its GPU on the destination's rail (NCCL's PXN); no spines
  spine,         // up from the source's rail switch to a spine and down to the destination's rail switch
};

struct MultiNodeSpec {
  NodeSpec node;
  int num_nodes = 2;
  ScaleOutNetwork network = ScaleOutNetwork::rail_optimized;
  LinkSpec switch_link;  // leaf/rail switch <-> spine, per direction (unused: rail_optimized, nvlink_first)
  int nodes_per_leaf = 4;  // fat tree: how many nodes' NICs one leaf switch takes
  RailCrossing rail_crossing = RailCrossing::nvlink_first;  // rail_optimized only
};

// Nodes joined by a scale-out network; each node has its own host CPU. dimensions {devices_per_node,
// num_nodes}. Throws ValueError naming the first bad field: fewer than 1 node, fewer than 1 node per leaf
// (fat tree), a bad switch link where spines exist, or a bad node (as accelerator_node).
PlatformBuilder multi_node_cluster(MultiNodeSpec spec);

// `num_nodes` of `node` on the rail-optimised network its collective library expects: other rails over the
// node fabric first (PXN), except where the node's RCCL keeps PXN off for that many ranks
// (RcclNode::pxn_min_ranks): then over spines, each rail switch joined to each spine at the NICs' rate.
MultiNodeSpec library_cluster_spec(NodeSpec node, int num_nodes);

// The names of the links a message from endpoint `from` to endpoint `to` crosses, in order, on the
// platform the builder of the same spec makes; endpoints are devices 0 .. N-1 and host CPUs -1 (node 0's)
// down to -num_nodes. Pure (nothing is built); the builders route with the same function.
std::vector<std::string> accelerator_node_route(const NodeSpec& node, int from, int to);
std::vector<std::string> multi_node_route(const MultiNodeSpec& spec, int from, int to);

}  // namespace spmdsim::topologies
