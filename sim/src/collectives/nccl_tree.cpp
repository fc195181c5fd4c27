// Sources, NVIDIA/nccl 2.30.7 (commit 5067397c), read for docs/collectives.md#tree:
// - latencies: src/graph/tuning.cc:149-176 (baseLatencies and hwLatencies, Tree rows), :414-416 (the chain
//   and the tree, both ways);
// - bandwidths: tuning.cc:177-211 (llMaxBws, perChMaxTreeBws, perChMaxTreeLL128Bws), :306 (the tree graph's
//   bandwidth, bwInter past two nodes; nccl_net_graph.hpp), :330-336 (x 0.92 capped, LL / 3.8, LL128 x
//   120/128 or 7/9), :376-381 (algorithm bandwidth = busbw / 2);
// - the correction per size: tuning.cc:623-643 (treeCorrectionFactor, Tree below 2^23 x 64 bytes, NVLSTree on
//   Blackwell x86 hosts below 2^24 x 64);
// - threads and thresholds: tuning.cc:244-257 (Tree: 512 threads for LL and Simple, 640 for LL128, as Ring),
//   :588-592 (thresholds 8, 8, 64 bytes per thread, not scaled by the ranks as Ring's LL is),
//   enqueue.cc:2093-2096;
// - the trees: src/graph/connect.cc:20-73 (the chain of each channel's tree graph, parent on its first GPU,
//   children on the second and the first: NCCL_TOPO_PATTERN_BALANCED_TREE), :138-171 (channels c and c +
//   nChannels on trees 0 and 1 of ncclGetDtree).
#include "collectives/nccl_tree.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_net_graph.hpp"

namespace spmdsim::collectives {
namespace {

constexpr Seconds kMicrosecond = 1e-6;

struct TreeFigures {
  Seconds base_latency;
  Seconds nvlink_step_latency;
  Seconds net_step_latency;
};
constexpr TreeFigures kTreeLL{6.8 * kMicrosecond, 0.6 * kMicrosecond, 5.0 * kMicrosecond};
constexpr TreeFigures kTreeLL128{14.0 * kMicrosecond, 1.25 * kMicrosecond, 8.5 * kMicrosecond};
constexpr TreeFigures kTreeSimple{8.4 * kMicrosecond, 4.0 * kMicrosecond, 14.0 * kMicrosecond};

const TreeFigures& tree_figures(NcclProtocol protocol) {
  return protocol == NcclProtocol::ll ? kTreeLL : protocol == NcclProtocol::ll128 ? kTreeLL128 : kTreeSimple;
}

constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// The tuner's column of a per-node-count table: 1, 2, >= 3 nodes.
std::size_t node_column(int nodes) { return static_cast<std::size_t>(std::clamp(nodes, 1, 3) - 1); }

double tree_algorithm_bandwidth(const NcclNode& node, NcclProtocol protocol, int ranks, int nodes,
                                double bytes) {
  return nccl_tree_bus_bandwidth(node, protocol, ranks / nodes, nodes) / 2 *
         nccl_tree_correction(protocol, bytes, 23);
}

}  // namespace

double nccl_tree_correction(NcclProtocol protocol, double bytes, int sizes) {
  const double lines = std::floor(bytes / 64);
  if (lines < 1) return 1;
  const int size_class = static_cast<int>(std::floor(std::log2(lines)));
  if (size_class >= sizes) return 1;
  return kTreeCorrection[static_cast<std::size_t>(protocol)][static_cast<std::size_t>(size_class)];
}

double nccl_tree_bus_bandwidth(const NcclNode& node, NcclProtocol protocol, int local, int nodes) {
  const NcclGraph graph = nccl_tree_graph(node, local, nodes);
  const std::size_t column = node_column(nodes);
  const double bus = std::min(0.92 * nccl_graph_bandwidth(graph, nodes),
                              graph.channels * node.tree_channel_bandwidth[column]);
  switch (protocol) {
    case NcclProtocol::ll:
      return std::min(bus / 3.8, node.ll_max_bandwidth[column]);
    case NcclProtocol::ll128:
      return std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                      graph.channels * node.tree_ll128_channel_bandwidth[column]);
    case NcclProtocol::simple:
      return bus;
  }
  throw std::logic_error("unreachable NCCL protocol");
}

Seconds nccl_tree_latency(NcclProtocol protocol, int ranks, int nodes) {
  const auto& figures = tree_figures(protocol);
  return figures.base_latency + 2 * ((ranks / nodes - 1) * figures.nvlink_step_latency +
                                     std::floor(std::log2(nodes)) * figures.net_step_latency);
}

Seconds nccl_tree_tuner_time(const NcclNode& node, NcclProtocol protocol, int ranks, int nodes, double bytes) {
  return nccl_tree_latency(protocol, ranks, nodes) +
         bytes / tree_algorithm_bandwidth(node, protocol, ranks, nodes, bytes);
}

NcclProtocol nccl_tree_tuner_protocol(const NcclNode& node, int ranks, int nodes, double bytes) {
  NcclProtocol best = NcclProtocol::ll;
  for (NcclProtocol protocol : kNcclProtocols)
    if (nccl_tree_tuner_time(node, protocol, ranks, nodes, bytes) <
        nccl_tree_tuner_time(node, best, ranks, nodes, bytes))
      best = protocol;
  return best;
}

int nccl_tree_call_channels(NcclProtocol protocol, double bytes, int max_channels) {
  // Tree's threads are Ring's; its LL threshold is not scaled by the ranks.
  return nccl_call_channels(protocol, 1, bytes, max_channels);
}

NcclTreePlan nccl_tree_plan(const Communicator& comm, double bytes) {
  const NcclNode& node = *comm.nccl_node();
  const auto dimensions = comm.dimensions();
  const int ranks = comm.size();
  const int nodes = group_nodes(dimensions);
  const NcclProtocol protocol = comm.protocol().empty() ? nccl_tree_tuner_protocol(node, ranks, nodes, bytes)
                                                        : parse_nccl_protocol(comm.protocol());
  const int channels = nccl_tree_call_channels(protocol, bytes, comm.channels());
  return {protocol, channels,
          {.wire_bytes_per_byte = nccl_protocol_figures(protocol).wire_bytes_per_byte,
           .rate = tree_algorithm_bandwidth(node, protocol, ranks, nodes, bytes) * channels /
                   nccl_comm_channels(node, ranks / nodes, nodes),
           .start_latency = nccl_tree_latency(protocol, ranks, nodes),
           .reduces_in_flight = true}};
}

std::vector<Communicator::Exchange> nccl_tree_exchanges(int local, int nodes, int rank, Bytes bytes, int channels) {
  const int node = rank / local;
  const int index = rank % local;
  const Bytes share = bytes / (2.0 * channels);
  std::map<int, Communicator::Exchange> by_peer;
  const auto both_ways = [&](int peer) {
    auto& entry = by_peer[peer];
    entry.peer = peer;
    entry.sends += share;
    entry.receives += share;
  };
  const std::vector<BinaryTreeLinks> trees = nccl_double_binary_tree(nodes, node);
  // Whether this node is its parent's first child in each tree: its head then sends to the parent's second GPU.
  std::array<bool, 2> first_child{};
  for (std::size_t t = 0; t < 2; ++t)
    if (trees[t].parent >= 0) {
      const std::vector<BinaryTreeLinks> parent_trees = nccl_double_binary_tree(nodes, trees[t].parent);
      first_child[t] = !parent_trees[t].children.empty() && parent_trees[t].children.front() == node;
    }
  for (int c = 0; c < channels; ++c) {
    const int head = c % local;
    // The chain's position of this rank and its GPU at position i of any node.
    const int position = (index - head + local) % local;
    const auto at = [&](int of_node, int i) { return of_node * local + (head + i) % local; };
    for (std::size_t t = 0; t < 2; ++t) {
      if (position > 0) both_ways(at(node, position - 1));
      if (position + 1 < local) both_ways(at(node, position + 1));
      if (position == 0 && trees[t].parent >= 0)
        both_ways(at(trees[t].parent, first_child[t] && local > 1 ? 1 : 0));
      for (std::size_t i = 0; i < trees[t].children.size(); ++i)
        if (position == (i == 0 && local > 1 ? 1 : 0)) both_ways(at(trees[t].children[i], 0));
    }
  }
  std::vector<Communicator::Exchange> exchanges;
  for (const auto& [peer, entry] : by_peer) exchanges.push_back(entry);
  return exchanges;
}

}  // namespace spmdsim::collectives
