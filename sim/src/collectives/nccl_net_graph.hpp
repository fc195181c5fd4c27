// NCCL's ring and tree graphs when a group spans nodes, as pure functions of NCCL 2.30.7's search
// (docs/collectives.md#channels-across-nodes): one graph channel per NIC, at the fastest of the
// architecture's inter-node speeds one NIC carries, the tree's intra-node speed raised on the second pass;
// the channels a call runs on (each graph channel twice); and the graph bandwidth NCCL's tuner rates Ring
// and Tree from.
#pragma once

#include "spmdsim/platform.hpp"

namespace spmdsim::collectives {

// A graph as NCCL's search leaves it: its channels, bwIntra and bwInter (B/s).
struct NcclGraph {
  int channels = 0;
  double intra = 0;
  double inter = 0;
};

// One NIC's speed as NCCL's search counts it, for groups of `local` GPUs per node: NcclNode::nic_speed, or
// the node's NICs shared out among its GPUs where the node gives none.
double nccl_nic_speed(const NcclNode& node, int local);

// Whether the node carries what the search across nodes needs: its inter-node speeds and NICs.
bool has_net_graphs(const NcclNode& node);

// The ring graph of a group of `local` GPUs on each of `nodes` nodes. One node: the node's graph
// (graph_channels x graph_bandwidth). Across nodes (search.cc:1150-1290): every channel enters its node
// through a NIC and leaves through one (crossNic), so there are as many channels as NICs (one per GPU, times
// the channels of the search speed a NIC carries whole), at the fastest inter-node speed that a NIC carries
// and that the NVLink of every GPU carries for the local - 1 channels it forwards; bwIntra = bwInter.
// Without has_net_graphs, the node's graph, bwInter capped by the NICs.
NcclGraph nccl_ring_graph(const NcclNode& node, int local, int nodes);
// The tree graph: the ring graph's channels and bwInter, bwIntra raised by the second pass while below twice
// bwInter and within the NVLink of every GPU (search.cc:1279-1283; the tuner reads bwIntra on 2 nodes).
NcclGraph nccl_tree_graph(const NcclNode& node, int local, int nodes);

// What the tuner rates Ring and Tree from (tuning.cc:306, 325): channels x bwIntra on at most 2 nodes,
// channels x bwInter on more, B/s.
double nccl_graph_bandwidth(const NcclGraph& graph, int nodes);

// The channels NCCL runs a ring or tree call on (comm->nChannels): ring_channels inside one node; across
// nodes each graph channel twice (connect.cc:460).
int nccl_comm_channels(const NcclNode& node, int local, int nodes);

}  // namespace spmdsim::collectives
