// NCCL's Tree all-reduce (a chain through each node's GPUs, a double binary tree of the nodes), as pure
// functions of NCCL 2.30.7's figures (docs/collectives.md#tree, ../shared/REFERENCES.md §2.6): its tuner's
// latency, bandwidth and time per protocol, the channels a call earns, the tuner's correction per size, and
// what each rank of the `nccl_tree` algorithm moves.
#pragma once

#include <vector>

#include "collectives/nccl_protocols.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

// The tuner's correction of a tree's bandwidth by size (tuning.cc:623-643, treeCorrectionFactor): a factor
// in [0.4, 1] by protocol and floor(lg(bytes / 64)), applied below 2^sizes x 64 bytes (Tree: sizes = 23;
// NVLSTree where the node applies it: 24).
double nccl_tree_correction(NcclProtocol protocol, double bytes, int sizes);

// The tuner's bus bandwidth of a Tree all-reduce of `protocol` over `local` GPUs on each of `nodes` nodes
// (tuning.cc:306-336): the tree graph's bandwidth (nccl_net_graph.hpp: bwIntra on at most 2 nodes, bwInter on
// more) x 0.92 capped per graph channel (perChMaxTreeBw), then LL / 3.8 capped at llMaxBw, LL128 x 120/128
// (7/9 on one node) capped per graph channel.
double nccl_tree_bus_bandwidth(const NcclNode& node, NcclProtocol protocol, int local, int nodes);
// Its latency (tuning.cc:149-176, 417-420): baseLat + 2 ((ranks per node - 1) NVLink hops + floor(lg nodes)
// network hops).
Seconds nccl_tree_latency(NcclProtocol protocol, int ranks, int nodes);
// The tuner's time of a Tree all-reduce of `bytes`: latency + bytes / (busbw / 2 x the size correction).
Seconds nccl_tree_tuner_time(const NcclNode& node, NcclProtocol protocol, int ranks, int nodes, double bytes);
// The protocol with the lowest Tree time (the first of LL, LL128, Simple on a tie).
NcclProtocol nccl_tree_tuner_protocol(const NcclNode& node, int ranks, int nodes, double bytes);
// The channels a Tree call runs on (enqueue.cc:2093-2096): from `max_channels` down while the call has fewer
// than channels x threads x threshold bytes.
int nccl_tree_call_channels(NcclProtocol protocol, double bytes, int max_channels);

// What `nccl_tree` runs one call on: the protocol (the tuner's, or the call's), its channels, and how the
// pipeline moves: the tuner's latency, its algorithm bandwidth over the channels used as the pace, the
// protocol's wire bytes. Only where comm.nccl_node().
struct NcclTreePlan {
  NcclProtocol protocol;
  int channels;
  ChannelProtocol pipeline;
};
NcclTreePlan nccl_tree_plan(const Communicator& comm, double bytes);

// What rank `rank` of a group of `local` ranks on each of `nodes` nodes moves in a Tree all-reduce of `bytes`
// on `channels` channels, by peer: each channel c and each tree t of the double binary tree carries
// bytes / (2 channels); inside a node a chain from the channel's head (local index c mod local) through the
// others in index order, each link carrying it up and down; across nodes the head sends to its parent node's
// head (its first child lands on the parent's second GPU, NCCL's balanced tree, so that a node's parent and
// child traffic leave through different NICs).
std::vector<Communicator::Exchange> nccl_tree_exchanges(int local, int nodes, int rank, Bytes bytes, int channels);

}  // namespace spmdsim::collectives
