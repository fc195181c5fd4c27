// Recursive-halving reduce-scatter for commutative operations (MPICH
// reduce_scatter_intra_recursive_halving.c): rank r starts with partial sums of all p blocks; at each step
// it pairs with the rank that differs in one bit (highest first), sends the half of its range that the
// partner keeps, and folds the partner's partials into the half it keeps. After lg p steps it holds block
// r reduced over all ranks.
//
//   p = 4, blocks each rank still holds (it sends the other half of its range):
//   start               r0..r3: [b0 b1 b2 b3]
//   step 0 (r ^ 2)      r0, r1: [b0 b1]        r2, r3: [b2 b3]      2 blocks each way
//   step 1 (r ^ 1)      r0: [b0]  r1: [b1]     r2: [b2]  r3: [b3]   1 block each way
//
// Cost: lg p alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma, n the size of all p blocks ([V-MPICH]
// reduce_scatter_intra_recursive_halving.c, REFERENCES.md §3.1). Every step pairs the ranks off, so on a
// switch no link carries two messages at once and the formula holds exactly. p must be a power of two:
// for other counts MPICH adds a step before and after in which some ranks do their neighbours' work; its
// comment calls that cost approximate because of this imbalance (REFERENCES.md §3.1 quotes it, a stray n
// in the beta term included), so with no exact closed form to check against, this algorithm refuses them.
#include <cmath>

#include "api/kernels/kernels.hpp"
#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

Array recursive_halving_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  // My partial sums of the blocks of my current range, stacked on a leading axis (free: one buffer).
  Array partial = kernels::stack(blocks, 0).value;
  for (int half = p / 2; half >= 1; half /= 2) {
    const bool keep_lower = (r & half) == 0;
    Array lower = kernels::slice(partial, 0, 0, half).value;
    Array upper = kernels::slice(partial, 0, half, 2 * half).value;
    Array received = comm.sendrecv(r ^ half, keep_lower ? upper : lower, r ^ half);
    partial = comm.combine(keep_lower ? lower : upper, received, op);
  }
  return kernels::take(partial, 0, 0).value;
}

double recursive_halving_reduce_scatter_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return std::log2(c.p) * c.alpha + share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
