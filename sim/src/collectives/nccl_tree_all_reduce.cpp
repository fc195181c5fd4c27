// NCCL's Tree all-reduce (src/device/all_reduce.h, runTreeUpDown and runTreeSplit; src/graph/connect.cc):
// each channel's data is reduced up a chain through the GPUs of each node and a double binary tree of the
// nodes (ncclGetDtree, half the channels on each tree), and broadcast back down, chunk by chunk, so that
// every stage moves at once. The `nccl_tree` algorithm runs a call as that pipeline
// (Communicator::pipelined_all_reduce): each rank's exchanges with its chain neighbours and, for a node's
// chain ends, with the other nodes' (nccl_tree_exchanges), at the tuner's rate after its latency, with its
// protocol's wire bytes (nccl_tree.hpp). It runs on any group; without NCCL's figures on the platform there is
// no Tree to follow and it refuses.
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_tree.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {

Array nccl_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  if (comm.nccl_node() == nullptr)
    throw ValueError(
        "all_reduce algorithm 'nccl_tree' runs NCCL's Tree on NCCL's figures, which only the NVIDIA node "
        "presets carry (dgx_a100, dgx_h100, hgx_h200, dgx_b200, one node or --nodes)");
  const auto dimensions = comm.dimensions();
  const int nodes = group_nodes(dimensions);
  const auto bytes = static_cast<Bytes>(flat.nbytes());
  const auto plan = nccl_tree_plan(comm, bytes);
  return comm.pipelined_all_reduce(
      flat, op, plan.pipeline,
      {.exchanges = nccl_tree_exchanges(comm.size() / nodes, nodes, comm.rank(), bytes, plan.channels)});
}

}  // namespace spmdsim::collectives
