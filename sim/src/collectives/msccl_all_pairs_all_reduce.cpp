// RCCL's MSCCL all-pairs all-reduce on the 8 GPUs of a full-mesh node (rccl_msccl.hpp: the program per call).
// Every rank cuts its vector into p shards; in step 1 it sends shard j to rank j and reduces the shards the
// others send it, in step 2 it sends its reduced shard to every rank. Each step drives all of a rank's links
// at once, chunk by chunk, so its traffic moves together (Communicator::pipelined_all_reduce): 2 n / p to and
// from every peer, at most at the program's channels' rate, after RCCL's latency for the two steps.
//
//   p = 4, rank 0:  step 1                          step 2
//                   shard1 -> 1, shard2 -> 2,       sum0 -> 1, 2, 3
//                   shard3 -> 3; shard0 from all    sum1, sum2, sum3 from 1, 2, 3
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/rccl_msccl.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {

std::vector<Communicator::Exchange> msccl_all_pairs_exchanges(int rank, int ranks, Bytes bytes) {
  std::vector<Communicator::Exchange> exchanges;
  const Bytes each_way = kMscclAllPairsSteps * bytes / ranks;
  for (int peer = 0; peer < ranks; ++peer)
    if (peer != rank) exchanges.push_back({.peer = peer, .sends = each_way, .receives = each_way});
  return exchanges;
}

Array msccl_all_pairs_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const RcclNode* node = comm.rccl_node();
  const auto bytes = static_cast<Bytes>(flat.nbytes());
  const auto program = node == nullptr
                           ? std::nullopt
                           : msccl_all_reduce_program(*node, comm.size(), group_nodes(comm.dimensions()),
                                                      flat.size(), static_cast<double>(bytes));
  if (!program)
    throw ValueError(fmt::format(
        "RCCL runs its MSCCL all-pairs all-reduce on 8 GPUs of one node with RCCL's MSCCL figures "
        "(mi300x_8gpu), up to 16 MiB and for element counts that are multiples of 256 (LL, up to 64 KiB) or "
        "512; this call: {} devices, {} elements",
        comm.size(), flat.size()));
  return comm.pipelined_all_reduce(flat, op, msccl_channel_protocol(*node, *program),
                                   {.exchanges = msccl_all_pairs_exchanges(comm.rank(), comm.size(), bytes)});
}

}  // namespace spmdsim::collectives
