// Rabenseifner's all-reduce (MPICH allreduce_intra_reduce_scatter_allgather): a recursive-halving
// reduce-scatter (step k: exchange half of the current region with the rank 2^k away, keep and reduce the
// other half) then a recursive-doubling all-gather that retraces the steps in reverse. A count that is not a
// power of two is folded to one first, the MPICH way (power_of_two_fold.cpp).
//
//   p = 4, vector [A B C D]:   step 0 (0<->1, 2<->3): ranks 0,2 keep [A B], ranks 1,3 keep [C D]
//                              step 1 (0<->2, 1<->3): rank 0 keeps A, 2 B, 1 C, 3 D, each reduced over all
//                              then the same partners in reverse order double the regions back to [A B C D]
//
// The regions are halved element-wise (the lower half takes the odd element), which equals MPICH's split
// into p' counts whenever p' divides the vector.
//
// Cost for p a power of two (MPICH comment; Thakur, Rabenseifner & Gropp 2005):
//   2 lg p alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
// Otherwise, with p' = 2^floor(lg p) (derived: fold and unfold add 2 alpha + 2 n beta + n gamma to the core
// on p'; MPICH's comment writes p where the core's share is (p'-1)/p'):
//   (2 lg p' + 2) alpha + (2 + 2 (p'-1)/p') n beta + (1 + (p'-1)/p') n gamma.
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array rabenseifner_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  Array data = flat;
  const PowerOfTwoFold fold = fold_to_power_of_two(comm, data, op);
  if (fold.core_rank >= 0) {
    // Which half of its region this rank kept at each halving step: 0 the lower, 1 the upper.
    std::vector<int> kept;
    for (int mask = 1; mask < fold.pof2; mask <<= 1) {
      const int peer = fold.rank_of(fold.core_rank ^ mask);
      const int keep = (fold.core_rank & mask) ? 1 : 0;
      const std::vector<Array> halves = split_flat(data, 2);
      const Array received = comm.sendrecv(peer, halves[1 - keep], peer);
      data = comm.combine(halves[keep], received, op);
      kept.push_back(keep);
    }
    for (int mask = fold.pof2 / 2; mask >= 1; mask >>= 1) {
      const int peer = fold.rank_of(fold.core_rank ^ mask);
      const Array other = comm.sendrecv(peer, data, peer);
      data = kept.back() == 0 ? join_flat({data, other}) : join_flat({other, data});
      kept.pop_back();
    }
  }
  unfold_from_power_of_two(comm, fold, data);
  return data;
}

double rabenseifner_all_reduce_cost(const CostInputs& c) {
  const int steps = floor_log2(c.p);
  const double core = 1 << steps;
  const double share = (core - 1) / core;
  const double core_time = 2 * steps * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
  if (power_of_two(c.p)) return core_time;
  return core_time + 2 * c.alpha + 2 * c.n * c.beta + c.n * c.gamma;
}

}  // namespace spmdsim::collectives
