// Ring reduce-scatter (Patarasuk & Yuan 2009): p-1 steps; at step s rank r passes its partial sum of
// block r-s-1 to r+1 and folds the partial of block r-s-2 received from r-1 into its own.
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
  std::vector<Array> partial = blocks;
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  for (int s = 0; s < p - 1; ++s) {
    const int outgoing = wrap(r - s - 1, p);
    const int incoming = wrap(r - s - 2, p);
    // Every rank split alike: what arrives is shaped like my own partial of that block.
    Array received = comm.sendrecv_shaped(next, partial[outgoing], prev, partial[incoming]);
    partial[incoming] = comm.combine(partial[incoming], received, op);
  }
  return partial[r];
}

double ring_reduce_scatter_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return (c.p - 1) * c.alpha + share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
