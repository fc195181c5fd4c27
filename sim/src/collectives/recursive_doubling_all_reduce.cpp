// Recursive-doubling all-reduce (MPICH allreduce_intra_recursive_doubling): in step k every rank exchanges
// its whole partial result with the rank 2^k away and reduces, so after lg p steps every rank holds the
// total. A count that is not a power of two is folded to one first, the MPICH way (power_of_two_fold.cpp).
//
//   p = 8:   step 0: 0<->1 2<->3 4<->5 6<->7   step 1: 0<->2 1<->3 4<->6 5<->7   step 2: 0<->4 ... 3<->7
//
// Cost for p a power of two (MPICH comment; Thakur, Rabenseifner & Gropp 2005):
//   lg p (alpha + n beta + n gamma).
// Otherwise (derived: the fold adds one reducing step, the unfold one plain step), p' = 2^floor(lg p):
//   (lg p' + 2) alpha + (lg p' + 2) n beta + (lg p' + 1) n gamma.
#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

Array recursive_doubling_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  Array data = flat;
  const PowerOfTwoFold fold = fold_to_power_of_two(comm, data, op);
  if (fold.core_rank >= 0) {
    for (int mask = 1; mask < fold.pof2; mask <<= 1) {
      const int peer = fold.rank_of(fold.core_rank ^ mask);
      data = comm.combine(data, comm.sendrecv(peer, data, peer), op);
    }
  }
  unfold_from_power_of_two(comm, fold, data);
  return data;
}

double recursive_doubling_all_reduce_cost(const CostInputs& c) {
  const int steps = floor_log2(c.p);
  const int folded = power_of_two(c.p) ? 0 : 1;
  return (steps + 2 * folded) * (c.alpha + c.n * c.beta) + (steps + folded) * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
