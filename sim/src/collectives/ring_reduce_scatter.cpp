// Ring reduce-scatter (Patarasuk & Yuan 2009) as NCCL's runRing runs it (src/device/reduce_scatter.h): p-1
// steps; at step s rank r passes its partial sum of block r-s-1 to r+1 and adds its own part of block r-s-2
// to the partial received from r-1. The partials in flight stay in the channel's staging buffers
// (Communicator::sendrecv_staged); only the last sum, block r reduced over all ranks, is written to a buffer
// of its own, the call's output.
//
//   step 0      step 1            ...  after p-1 steps rank r holds block r reduced over all ranks
//   r0 --b3--> r1 --b0--> r2 --b1--> r3 --b2--> r0   (p = 4, every rank sends at once)
//
// Cost: (p-1) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  const auto block = [&](int k) -> const Array& { return blocks[static_cast<std::size_t>(wrap(k, p))]; };
  Array passing = block(r - 1);
  for (int s = 0; s < p - 1; ++s) {
    // Every rank split alike: what arrives is shaped like this rank's own part of that block.
    const Array& mine = block(r - s - 2);
    const Array received = comm.sendrecv_staged(next, passing, prev, mine);
    passing = s < p - 2 ? comm.combine_staged(mine, received, op) : comm.combine(mine, received, op);
  }
  return passing;
}

double ring_reduce_scatter_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return (c.p - 1) * c.alpha + share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
