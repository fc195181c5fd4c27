// RCCL's MSCCL all-pairs all-reduce on the 8 GPUs of a full-mesh node (rccl_msccl.hpp: the program per call).
// Every rank cuts its vector into p shards; in step 1 it sends shard j to rank j and reduces the shards the
// others send it, in step 2 it sends its reduced shard to every rank. Each step drives all of a rank's links
// at once, chunk by chunk, so its traffic moves together (Communicator::pipelined_all_reduce): 2 n / p to and
// from every peer, at most at the program's channels' rate, after RCCL's latency for the two steps.
//
//   p = 4, rank 0:  step 1                          step 2
//                   shard1 -> 1, shard2 -> 2,       sum0 -> 1, 2, 3
//                   shard3 -> 3; shard0 from all    sum1, sum2, sum3 from 1, 2, 3
#include "collectives/algorithms.hpp"
#include "collectives/rccl_msccl.hpp"

namespace spmdsim::collectives {

std::vector<Communicator::Exchange> msccl_all_pairs_exchanges(int rank, int ranks, Bytes bytes) {
  std::vector<Communicator::Exchange> exchanges;
  const Bytes each_way = kMscclAllPairsSteps * bytes / ranks;
  for (int peer = 0; peer < ranks; ++peer)
    if (peer != rank) exchanges.push_back({.peer = peer, .sends = each_way, .receives = each_way});
  return exchanges;
}

Array msccl_all_pairs_all_reduce(Communicator& comm, const Array& flat, ReduceOp op, const RcclNode& node,
                                 const MscclProgram& program) {
  const auto bytes = static_cast<Bytes>(flat.nbytes());
  return comm.pipelined_all_reduce(flat, op, msccl_channel_protocol(node, program),
                                   {.exchanges = msccl_all_pairs_exchanges(comm.rank(), comm.size(), bytes)});
}

}  // namespace spmdsim::collectives
