// Ring all-gather: p-1 steps; at step s rank r forwards the piece of rank r-s to r+1 and receives the
// piece of rank r-s-1 from r-1.
//
//   r0 -> r1 -> r2 -> r3 -> r0     each arrow carries one piece per step
//
// Cost: (p-1) alpha + ((p-1)/p) n beta, n the gathered size.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine) {
  return ring_all_gather(comm, mine, std::vector<Array>(static_cast<std::size_t>(comm.size()), mine));
}

std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine, const std::vector<Array>& like) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Array> pieces(static_cast<std::size_t>(p));
  pieces[r] = mine;
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  for (int s = 0; s < p - 1; ++s)
    pieces[wrap(r - s - 1, p)] = comm.sendrecv_shaped(next, pieces[wrap(r - s, p)], prev, like[wrap(r - s - 1, p)]);
  return pieces;
}

double ring_all_gather_cost(const CostInputs& c) {
  return (c.p - 1) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
