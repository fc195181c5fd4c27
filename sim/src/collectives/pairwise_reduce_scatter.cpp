// Pairwise-exchange reduce-scatter (MPICH reduce_scatter_block_intra_pairwise.c): p-1 steps; at step s
// rank r sends its block for r+s to r+s, receives the block for itself from r-s and folds it into its sum.
//
//   step s = 1:  r0 -b1-> r1 -b2-> r2 -b3-> r3 -b0-> r0
//   step s = 2:  r0 -b2-> r2,  r1 -b3-> r3,  r2 -b0-> r0,  r3 -b1-> r1
//   every rank sends and receives one block per step
//
// Cost: (p-1) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma, n the size of all p blocks ([V-MPICH]
// reduce_scatter_block_intra_pairwise.c, REFERENCES.md §3.1). Every step is a shift by s, a permutation
// of the ranks, so on a switch no link carries two messages at once and the formula holds exactly.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array pairwise_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  Array sum = blocks[r];
  for (int s = 1; s < p; ++s) {
    const int to = wrap(r + s, p);
    sum = comm.combine(sum, comm.sendrecv(to, blocks[to], wrap(r - s, p)), op);
  }
  return sum;
}

double pairwise_reduce_scatter_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return (c.p - 1) * c.alpha + share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
