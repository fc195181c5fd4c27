// `nccl`: the algorithm NCCL's tuner picks for the call (tuning.cc:630-655 and enqueue.cc:2035-2044, the
// lowest latency + bytes / bandwidth over algorithm x protocol, the first on a tie in NCCL's order Tree,
// Ring, ..., NVLS, NVLSTree). Modelled here: Tree (nccl_tree) and Ring (nccl_ring), each with the protocol
// its tuner time favours, NVLS (nvls: an all-reduce whose group is one node with a reducing switch) and
// NVLSTree (nvls_tree: an all-reduce over whole nodes whose switches reduce), the last two Simple only. PAT
// is not. An all-gather or reduce-scatter runs Ring, as NCCL does inside a node without NVLS buffers
// registered (the tuner's NVLS all-gather bandwidth, channels x bwIntra x efficiency x ((local - 1) /
// local)^2, is below the ring's on every preset: Hopper 208 GB/s against 360), and across nodes, where NCCL's
// NVLS all-gather needs CollNet and its Tree does not gather. Where RCCL drives the nodes (no NCCL figures,
// RCCL's), `nccl` runs an all-reduce with RCCL's MSCCL all-pairs program where one covers the call
// (rccl_msccl.hpp), as RCCL does before its tuner looks, else RCCL's rings.
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "collectives/nccl_protocols.hpp"
#include "collectives/nccl_tree.hpp"
#include "collectives/rccl_msccl.hpp"
#include "collectives/rccl_protocols.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {
namespace {

enum class NcclAlgorithm { tree, ring, nvls, nvls_tree };

struct AllReduceChoice {
  NcclAlgorithm algorithm;
  NcclProtocol protocol;
};

// What `nccl` runs an all-reduce of elements_per_rank x ranks elements as: the lowest tuner time among Tree
// and Ring with their best protocols (or `protocol`), NVLS on one node and NVLSTree on several (at least 2
// GPUs each: NVLS needs 2 channels), every node's switch reducing (`switches_reduce`), under Simple.
AllReduceChoice pick_all_reduce(const NcclNode& node, const std::vector<int>& dimensions,
                                std::int64_t elements_per_rank, std::int64_t itemsize, int max_channels,
                                const std::string& protocol, bool switches_reduce) {
  const int ranks = group_size(dimensions);
  const int nodes = group_nodes(dimensions);
  const int local = ranks / nodes;
  const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
  const auto ring = nccl_ring_call(node, CollectiveKind::all_reduce, dimensions, elements_per_rank, itemsize,
                                   max_channels, protocol);
  const NcclProtocol tree_protocol =
      protocol.empty() ? nccl_tree_tuner_protocol(node, ranks, nodes, bytes) : parse_nccl_protocol(protocol);
  AllReduceChoice best{NcclAlgorithm::tree, tree_protocol};
  Seconds best_time = nccl_tree_tuner_time(node, tree_protocol, ranks, nodes, bytes);
  const auto consider = [&](AllReduceChoice choice, Seconds time) {
    if (time < best_time) {
      best = choice;
      best_time = time;
    }
  };
  consider({NcclAlgorithm::ring, ring.protocol},
           nccl_ring_tuner_time(node, ring.protocol, CollectiveKind::all_reduce, ranks, nodes, bytes));
  const bool simple = protocol.empty() || parse_nccl_protocol(protocol) == NcclProtocol::simple;
  if (switches_reduce && simple && has_nvls(node)) {
    if (nodes == 1)
      consider({NcclAlgorithm::nvls, NcclProtocol::simple}, nvls_tuner_time(node, ranks, bytes));
    else if (local >= 2 && has_nvls_tree(node))
      consider({NcclAlgorithm::nvls_tree, NcclProtocol::simple},
               nvls_tree_tuner_time(node, local, nodes, bytes));
  }
  return best;
}

}  // namespace

Array nccl_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const NcclNode* node = comm.nccl_node();
  const auto dimensions = comm.dimensions();
  if (const RcclNode* rccl = comm.rccl_node(); node == nullptr && rccl != nullptr)
    if (const auto program = msccl_all_reduce_program(*rccl, comm.size(), group_nodes(dimensions),
                                                      flat.size(), static_cast<double>(flat.nbytes())))
      return msccl_all_pairs_all_reduce(comm, flat, op, *rccl, *program);
  if (node == nullptr || comm.size() == 1) return nccl_ring_all_reduce(comm, flat, op);
  const bool switches_reduce =
      group_nodes(dimensions) == 1 ? comm.switch_reduces() : comm.node_switches_reduce();
  switch (pick_all_reduce(*node, dimensions, flat.size() / comm.size(),
                          static_cast<std::int64_t>(itemsize(flat.dtype())), comm.channels(), comm.protocol(),
                          switches_reduce)
              .algorithm) {
    case NcclAlgorithm::tree:
      return nccl_tree_all_reduce(comm, flat, op);
    case NcclAlgorithm::nvls:
      return nvls_all_reduce(comm, flat, op);
    case NcclAlgorithm::nvls_tree:
      return nvls_tree_all_reduce(comm, flat, op);
    case NcclAlgorithm::ring:
      break;
  }
  return nccl_ring_all_reduce(comm, flat, op);
}

std::vector<Array> nccl_all_gather(Communicator& comm, const Array& mine) {
  return nccl_ring_all_gather(comm, mine);
}

Array nccl_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  return nccl_ring_reduce_scatter(comm, blocks, op);
}

}  // namespace spmdsim::collectives

namespace spmdsim {

namespace {

void check_choice_algorithm(std::string_view algorithm) {
  if (algorithm != "nccl" && algorithm != "nccl_ring")
    throw ValueError(fmt::format("no NCCL choice for algorithm '{}'; valid: nccl, nccl_ring", algorithm));
}

}  // namespace

NcclChoice nccl_choice(const NcclNode& node, std::string_view algorithm, CollectiveKind kind,
                       const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                       std::int64_t itemsize, int max_channels, const std::string& protocol,
                       bool switches_reduce) {
  using namespace collectives;
  check_choice_algorithm(algorithm);
  if (algorithm == "nccl" && kind == CollectiveKind::all_reduce && group_size(dimensions) > 1) {
    const int nodes = group_nodes(dimensions);
    const int local = group_size(dimensions) / nodes;
    const double bytes =
        static_cast<double>(elements_per_rank) * group_size(dimensions) * static_cast<double>(itemsize);
    const auto choice = pick_all_reduce(node, dimensions, elements_per_rank, itemsize, max_channels, protocol,
                                        switches_reduce);
    const auto name = std::string(nccl_protocol_name(choice.protocol));
    switch (choice.algorithm) {
      case NcclAlgorithm::tree:
        return {"Tree", name, nccl_tree_call_channels(choice.protocol, bytes, max_channels)};
      case NcclAlgorithm::nvls:
        return {"NVLS", name, nccl_nvls_ctas(node, local, 1)};
      case NcclAlgorithm::nvls_tree:
        return {"NVLSTree", name, nccl_nvls_ctas(node, local, nodes)};
      case NcclAlgorithm::ring:
        break;
    }
  }
  const auto ring =
      nccl_ring_call(node, kind, dimensions, elements_per_rank, itemsize, max_channels, protocol);
  return {"Ring", std::string(nccl_protocol_name(ring.protocol)), ring.channels};
}

NcclChoice rccl_choice(const RcclNode& node, std::string_view algorithm, CollectiveKind kind,
                       const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                       std::int64_t itemsize, int max_channels, const std::string& protocol) {
  using namespace collectives;
  check_choice_algorithm(algorithm);
  const int ranks = group_size(dimensions);
  const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
  if (algorithm == "nccl" && kind == CollectiveKind::all_reduce)
    if (const auto program =
            msccl_all_reduce_program(node, ranks, group_nodes(dimensions), elements_per_rank * ranks, bytes))
      return {"MSCCL", std::string(nccl_protocol_name(program->protocol)), program->channels};
  const NcclProtocol chosen = rccl_ring_protocol(node, kind, ranks, bytes, protocol);
  return {"Ring", std::string(nccl_protocol_name(chosen)),
          at_most_one_per_element(max_channels, elements_per_rank)};
}

}  // namespace spmdsim
