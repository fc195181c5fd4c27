// Binomial-tree broadcast (MPICH bcast_intra_binomial): in round k the ranks that already hold the data
// (relative ranks below 2^k) send it 2^k further.
//
//   p = 8, root 0:   round 0: 0->1   round 1: 0->2, 1->3   round 2: 0->4, 1->5, 2->6, 3->7
//
// Cost: ceil(lg p) (alpha + n beta).
#include <cmath>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array binomial_broadcast(Communicator& comm, const Array& flat, int root) {
  const int p = comm.size();
  const int relative = wrap(comm.rank() - root, p);
  Array data = flat;
  int mask = 1;
  while (mask < p) {
    if (relative & mask) {
      data = comm.recv(wrap(relative - mask + root, p));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (relative + mask < p) comm.send_and_wait(wrap(relative + mask + root, p), data);
  return data;
}

double binomial_broadcast_cost(const CostInputs& c) {
  return std::ceil(std::log2(c.p)) * (c.alpha + c.n * c.beta);
}

}  // namespace spmdsim::collectives
