// NCCL's NVLSTree all-reduce across nodes whose NVSwitches reduce (src/device/all_reduce.h, RunWorkColl of
// NCCL_ALGO_NVLS_TREE; src/graph/connect.cc:248-323): inside each node the switch reduces as in NVLS, each GPU
// of the node being the head of one slice of the vector (nvlsHeads: one per NIC); the head sends its node's
// reduced slice up a tree of the nodes through its own NIC, takes the whole group's sum back down, and the
// switch multicasts it to every GPU of the node. The tree is NCCL's double binary tree of the nodes
// (ncclGetDtree), half of every slice on each of its two trees (channel c uses tree c % 2). Every stage is
// pipelined with the others, so they move at the same time (Communicator::pipelined_all_reduce).
//
// Traffic of one rank, p = local x nodes ranks, slice s = n / local: its switch port carries n + s each way,
// as in NVLS; its NIC carries s / 2 to and from its parent and each of its children in each tree: on 2 nodes
// s each way, on more nodes up to 2 s for a rank inner in one tree and a leaf in the other. On NCCL's
// figures the call starts after the tuner's latency and the vector moves at most at the tuner's algorithm
// bandwidth (nccl_nvls.hpp).
#include <map>

#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {

std::vector<Communicator::Exchange> nvls_tree_exchanges(int local, int nodes, int rank, Bytes bytes) {
  const int node = rank / local;
  const int head = rank % local;
  const Bytes half_slice = bytes / local / 2;
  std::map<int, Communicator::Exchange> by_peer;
  const auto exchange = [&](int other_node) -> Communicator::Exchange& {
    auto& entry = by_peer[other_node];
    entry.peer = other_node * local + head;
    return entry;
  };
  for (const BinaryTreeLinks& tree : nccl_double_binary_tree(nodes, node)) {
    // Up: the partial sum to the parent, from each child. Down: the result from the parent, to each child.
    if (tree.parent >= 0) {
      exchange(tree.parent).sends += half_slice;
      exchange(tree.parent).receives += half_slice;
    }
    for (int child : tree.children) {
      exchange(child).sends += half_slice;
      exchange(child).receives += half_slice;
    }
  }
  std::vector<Communicator::Exchange> exchanges;
  for (const auto& [other_node, entry] : by_peer) exchanges.push_back(entry);
  return exchanges;
}

Array nvls_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (!comm.node_switches_reduce())
    throw ValueError(fmt::format(
        "all_reduce algorithm 'nvls_tree' needs a group of whole nodes, at least 2, whose NVSwitches reduce "
        "(NVLink SHARP: the dgx_h100, hgx_h200 and dgx_b200 presets with --nodes); this group of {} devices "
        "is not (on one node: 'nvls')",
        comm.size()));
  const auto dimensions = comm.dimensions();
  const auto bytes = static_cast<Bytes>(flat.nbytes());
  return comm.pipelined_all_reduce(
      flat, op, nvls_tree_protocol(comm, bytes),
      {.switch_each_way = bytes + bytes / dimensions.front(),
       .exchanges = nvls_tree_exchanges(dimensions.front(), dimensions.back(), comm.rank(), bytes)});
}

}  // namespace spmdsim::collectives
