// `nccl`: the algorithm NCCL's tuner picks for the call (tuning.cc:630-655 and enqueue.cc:2035-2044, the lowest
// latency + bytes / bandwidth over algorithm x protocol, the first on a tie in NCCL's order Tree, Ring, ...,
// NVLS, NVLSTree). Modelled here: Ring (nccl_ring, with the protocol the tuner picks), NVLS (nvls: an all-reduce
// whose group is one node with a reducing switch) and NVLSTree (nvls_tree: an all-reduce over whole nodes whose
// switches reduce), the last two Simple only. NCCL's Tree and PAT are not, so where NVLSTree does not run a
// multi-node call runs Ring; an all-gather or reduce-scatter runs Ring, as NCCL does inside a node without NVLS
// buffers registered (the tuner's NVLS all-gather bandwidth, channels x bwIntra x efficiency x ((local - 1) /
// local)^2, is below the ring's on every preset: Hopper 208 GB/s against 360), and across nodes, where NCCL's
// NVLS all-gather needs CollNet.
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "collectives/nccl_protocols.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {
namespace {

enum class SwitchAlgorithm { none, nvls, nvls_tree };

// The switch algorithm `nccl` runs an all-reduce of elements_per_rank x ranks elements as, where its tuner time
// is below the ring's with the ring's best protocol: NVLS on one node, NVLSTree on several (at least 2 GPUs
// each: NVLS needs 2 channels), every node's switch reducing (`switches_reduce`), under Simple.
SwitchAlgorithm picks_switch(const NcclNode& node, const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                             std::int64_t itemsize, int max_channels, const std::string& protocol,
                             bool switches_reduce) {
  if (!switches_reduce || !has_nvls(node)) return SwitchAlgorithm::none;
  if (!protocol.empty() && parse_nccl_protocol(protocol) != NcclProtocol::simple) return SwitchAlgorithm::none;
  const int ranks = group_size(dimensions);
  const int nodes = group_nodes(dimensions);
  const int local = ranks / nodes;
  if (nodes > 1 && (local < 2 || !has_nvls_tree(node))) return SwitchAlgorithm::none;
  const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
  const auto ring = nccl_ring_call(node, CollectiveKind::all_reduce, dimensions, elements_per_rank, itemsize,
                                   max_channels, protocol);
  const Seconds ring_time = nccl_ring_tuner_time(node, ring.protocol, CollectiveKind::all_reduce, ranks, nodes, bytes);
  if (nodes == 1)
    return nvls_tuner_time(node, ranks, bytes) < ring_time ? SwitchAlgorithm::nvls : SwitchAlgorithm::none;
  return nvls_tree_tuner_time(node, local, nodes, bytes) < ring_time ? SwitchAlgorithm::nvls_tree
                                                                      : SwitchAlgorithm::none;
}

}  // namespace

Array nccl_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const NcclNode* node = comm.nccl_node();
  if (node == nullptr) return nccl_ring_all_reduce(comm, flat, op);
  const auto dimensions = comm.dimensions();
  const bool switches_reduce = group_nodes(dimensions) == 1 ? comm.switch_reduces() : comm.node_switches_reduce();
  switch (picks_switch(*node, dimensions, flat.size() / comm.size(), static_cast<std::int64_t>(itemsize(flat.dtype())),
                       comm.channels(), comm.protocol(), switches_reduce)) {
    case SwitchAlgorithm::nvls:
      return nvls_all_reduce(comm, flat, op);
    case SwitchAlgorithm::nvls_tree:
      return nvls_tree_all_reduce(comm, flat, op);
    case SwitchAlgorithm::none:
      break;
  }
  return nccl_ring_all_reduce(comm, flat, op);
}

std::vector<Array> nccl_all_gather(Communicator& comm, const Array& mine) { return nccl_ring_all_gather(comm, mine); }

Array nccl_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  return nccl_ring_reduce_scatter(comm, blocks, op);
}

}  // namespace spmdsim::collectives

namespace spmdsim {

NcclChoice nccl_choice(const NcclNode& node, std::string_view algorithm, CollectiveKind kind,
                       const std::vector<int>& dimensions, std::int64_t elements_per_rank, std::int64_t itemsize,
                       int max_channels, const std::string& protocol, bool switches_reduce) {
  using namespace collectives;
  if (algorithm != "nccl" && algorithm != "nccl_ring")
    throw ValueError(fmt::format("no NCCL choice for algorithm '{}'; valid: nccl, nccl_ring", algorithm));
  if (algorithm == "nccl" && kind == CollectiveKind::all_reduce) {
    const auto simple = std::string(nccl_protocol_name(NcclProtocol::simple));
    const int local = group_size(dimensions) / group_nodes(dimensions);
    switch (picks_switch(node, dimensions, elements_per_rank, itemsize, max_channels, protocol, switches_reduce)) {
      case SwitchAlgorithm::nvls:
        return {"NVLS", simple, nvls_graph(node, local).channels};
      case SwitchAlgorithm::nvls_tree:
        return {"NVLSTree", simple, nvls_graph(node, local, group_nodes(dimensions)).channels};
      case SwitchAlgorithm::none:
        break;
    }
  }
  const auto ring = nccl_ring_call(node, kind, dimensions, elements_per_rank, itemsize, max_channels, protocol);
  return {"Ring", std::string(nccl_protocol_name(ring.protocol)), ring.channels};
}

}  // namespace spmdsim
