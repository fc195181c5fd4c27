// Binomial all-reduce: a binomial-tree reduce to rank 0 then a binomial-tree broadcast from it, the old
// MPICH scheme ("a reduce to rank 0 followed by a broadcast", Thakur, Rabenseifner & Gropp 2005), composed
// of binomial_reduce.cpp and binomial_broadcast.cpp.
//
//   p = 8:   reduce    1->0 3->2 5->4 7->6 | 2->0 6->4 | 4->0
//            broadcast 0->4 | 0->2 4->6 | 0->1 2->3 4->5 6->7
//
// Cost (derived, REFERENCES.md §3.2): 2 ceil(lg p) alpha + 2 ceil(lg p) n beta + ceil(lg p) n gamma.
#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

Array binomial_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const Array reduced = binomial_reduce(comm, flat, op, /*root=*/0);
  return binomial_broadcast(comm, reduced, /*root=*/0);
}

double binomial_all_reduce_cost(const CostInputs& c) {
  const int rounds = ceil_log2(c.p);
  return 2 * rounds * (c.alpha + c.n * c.beta) + rounds * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
