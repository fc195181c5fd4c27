// `nccl`: the algorithm NCCL's tuner picks for the call (tuning.cc:630-655 and enqueue.cc:2035-2044, the lowest
// latency + bytes / bandwidth over algorithm x protocol, the first on a tie in NCCL's order Tree, Ring, ...,
// NVLS). Modelled here: Ring (nccl_ring, with the protocol the tuner picks) and NVLS (nvls), NVLS for an
// all-reduce whose group is one node with a reducing switch, Simple only. NCCL's Tree, NVLSTree and PAT are
// not, so a multi-node call runs Ring; an all-gather or reduce-scatter runs Ring, as NCCL does inside a node
// without NVLS buffers registered (the tuner's NVLS all-gather bandwidth, channels x bwIntra x efficiency x
// ((local - 1) / local)^2, is below the ring's on every preset: Hopper 208 GB/s against 360).
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "collectives/nccl_protocols.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {
namespace {

// Whether `nccl` runs an all-reduce of `bytes` as NVLS.
bool picks_nvls(const NcclNode& node, const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                std::int64_t itemsize, int max_channels, const std::string& protocol, bool switch_reduces) {
  if (!switch_reduces || !has_nvls(node) || group_nodes(dimensions) != 1) return false;
  if (!protocol.empty() && parse_nccl_protocol(protocol) != NcclProtocol::simple) return false;
  const int ranks = group_size(dimensions);
  const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
  const auto ring = nccl_ring_call(node, CollectiveKind::all_reduce, dimensions, elements_per_rank, itemsize,
                                   max_channels, protocol);
  return nvls_tuner_time(node, ranks, bytes) <
         nccl_ring_tuner_time(node, ring.protocol, CollectiveKind::all_reduce, ranks, 1, bytes);
}

}  // namespace

Array nccl_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const NcclNode* node = comm.nccl_node();
  const auto item = static_cast<std::int64_t>(itemsize(flat.dtype()));
  if (node != nullptr && picks_nvls(*node, comm.dimensions(), flat.size() / comm.size(), item, comm.channels(),
                                    comm.protocol(), comm.switch_reduces()))
    return nvls_all_reduce(comm, flat, op);
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
                       int max_channels, const std::string& protocol, bool switch_reduces) {
  using namespace collectives;
  if (algorithm != "nccl" && algorithm != "nccl_ring")
    throw ValueError(fmt::format("no NCCL choice for algorithm '{}'; valid: nccl, nccl_ring", algorithm));
  if (algorithm == "nccl" && kind == CollectiveKind::all_reduce &&
      picks_nvls(node, dimensions, elements_per_rank, itemsize, max_channels, protocol, switch_reduces)) {
    return {"NVLS", std::string(nccl_protocol_name(NcclProtocol::simple)),
            nvls_graph(node, group_size(dimensions)).channels};
  }
  const auto ring = nccl_ring_call(node, kind, dimensions, elements_per_rank, itemsize, max_channels, protocol);
  return {"Ring", std::string(nccl_protocol_name(ring.protocol)), ring.channels};
}

}  // namespace spmdsim
