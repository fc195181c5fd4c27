// Sources, NVIDIA/nccl 2.30.7 (commit 5067397c), read for docs/collectives.md#channels-across-nodes:
// - the speeds across nodes: src/graph/search.cc:1051-1065 (speedArrayInter per architecture), :1160 (used
//   when the system spans nodes), :1170-1174 (the first speed tried: within the GPU's path to its NIC);
// - a ring across nodes enters and leaves each node through a NIC, crossNic 2 letting them differ
//   (:1225-1230), one channel per NIC at that speed as NCCL_DEBUG_SUBSYS=GRAPH prints it on 2 x 8 H200-class
//   GPUs with 8 x 400 Gb/s NICs: "Pattern 4, crossNic 2, nChannels 8, bw 48.000000/48.000000";
// - the second pass (:1262-1284): Ring tries faster speeds, trees raise bwIntra while below twice bwInter;
// - the tuner: src/graph/tuning.cc:306 (bwIntra on at most 2 nodes, bwInter on more), :325 (x channels);
// - the channels: src/graph/connect.cc:460 (every graph channel set up twice).
#include "collectives/nccl_net_graph.hpp"

#include <algorithm>
#include <cmath>

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {
namespace {

// Whether `speed` fits a GPU's NVLink for the graph channels it forwards to the next GPU of its node: every
// channel but the one that leaves the node from it.
bool forwards(const NcclNode& node, int local, int channels_per_nic, double speed) {
  return (local - 1) * channels_per_nic * speed <= node.nvlink_bandwidth;
}

}  // namespace

double nccl_nic_speed(const NcclNode& node, int local) {
  return node.nic_speed > 0 ? node.nic_speed : node.net_bandwidth / local;
}

bool has_net_graphs(const NcclNode& node) {
  return !node.inter_search_speeds.empty() && node.net_bandwidth > 0 && node.nvlink_bandwidth > 0;
}

NcclGraph nccl_ring_graph(const NcclNode& node, int local, int nodes) {
  if (nodes <= 1 || !has_net_graphs(node)) {
    NcclGraph graph{node.graph_channels, node.graph_bandwidth, node.graph_bandwidth};
    if (nodes > 1 && node.net_bandwidth > 0)
      graph.inter = std::min(graph.inter, node.net_bandwidth / node.graph_channels);
    return graph;
  }
  const double nic = nccl_nic_speed(node, local);
  const auto& speeds = node.inter_search_speeds;
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > nic || !forwards(node, local, 1, speeds[i]))) ++i;
  const double speed = speeds[i];
  int per_nic = std::max(1, static_cast<int>(std::floor(nic / speed)));
  while (per_nic > 1 && !forwards(node, local, per_nic, speed)) --per_nic;
  return {local * per_nic, speed, speed};
}

NcclGraph nccl_tree_graph(const NcclNode& node, int local, int nodes) {
  NcclGraph graph = nccl_ring_graph(node, local, nodes);
  if (nodes <= 1 || !has_net_graphs(node)) return graph;
  const int per_nic = graph.channels / local;
  const auto& speeds = node.inter_search_speeds;
  // Faster speeds come first: step back from bwInter's while the last one taken is below twice bwInter.
  auto i = static_cast<std::size_t>(std::find(speeds.begin(), speeds.end(), graph.inter) - speeds.begin());
  while (i > 0 && graph.intra < 2 * graph.inter && forwards(node, local, per_nic, speeds[i - 1]))
    graph.intra = speeds[--i];
  return graph;
}

double nccl_graph_bandwidth(const NcclGraph& graph, int nodes) {
  return graph.channels * (nodes <= 2 ? graph.intra : graph.inter);
}

int nccl_comm_channels(const NcclNode& node, int local, int nodes) {
  if (nodes <= 1 || !has_net_graphs(node)) return node.ring_channels;
  return 2 * nccl_ring_graph(node, local, nodes).channels;
}

}  // namespace spmdsim::collectives

namespace spmdsim {

NcclNetGraphs nccl_net_graphs(const NcclNode& node, int local, int nodes) {
  const collectives::NcclGraph ring = collectives::nccl_ring_graph(node, local, nodes);
  const collectives::NcclGraph tree = collectives::nccl_tree_graph(node, local, nodes);
  return {collectives::nccl_comm_channels(node, local, nodes), ring.channels, ring.inter, tree.intra,
          tree.inter};
}

}  // namespace spmdsim
