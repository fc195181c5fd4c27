// Binomial-tree reduce (MPICH reduce_intra_binomial, commutative operators): in round k every relative
// rank with bit k set sends its partial result to the rank 2^k below and drops out.
//
//   p = 8, root 0:   round 0: 1->0, 3->2, 5->4, 7->6   round 1: 2->0, 6->4   round 2: 4->0
//
// Cost: ceil(lg p) (alpha + n beta + n gamma).
#include <cmath>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array binomial_reduce(Communicator& comm, const Array& flat, ReduceOp op, int root) {
  const int p = comm.size();
  const int relative = wrap(comm.rank() - root, p);
  Array partial = flat;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (relative & mask) {
      comm.send(wrap((relative & ~mask) + root, p), partial);
      break;
    }
    if ((relative | mask) < p) partial = comm.combine(partial, comm.recv(wrap((relative | mask) + root, p)), op);
  }
  return partial;
}

double binomial_reduce_cost(const CostInputs& c) {
  return std::ceil(std::log2(c.p)) * (c.alpha + c.n * c.beta + c.n * c.gamma);
}

}  // namespace spmdsim::collectives
