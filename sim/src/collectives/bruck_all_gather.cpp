// Bruck all-gather (Bruck et al. 1997; MPICH allgather_intra_brucks.c): rank r keeps the pieces of ranks
// r, r+1, r+2, ... in that order; at step k it sends the first min(2^k, p - 2^k) of them to r - 2^k and
// appends as many from r + 2^k, so after ceil(lg p) steps it holds all p. A final local rotation puts them
// in rank order.
//
//   p = 5, what rank 0 holds (piece numbers):
//   start          [0]
//   step 0  <- r1  [0 1]
//   step 1  <- r2  [0 1 2 3]
//   step 2  <- r4  [0 1 2 3 4]       (only p - 4 = 1 piece comes in the last step)
//   every step: r sends to r - 2^k and receives from r + 2^k (mod p)
//
// Cost: ceil(lg p) alpha + ((p-1)/p) n beta, n the gathered size, for any p ([V-MPICH]
// allgather_intra_brucks.c, REFERENCES.md §3.1). The rotation is a local copy the model leaves out (it is
// free here too). Every step is a shift by 2^k, a permutation of the ranks, so on a switch no link carries
// two messages at once and the formula holds exactly.
#include <algorithm>
#include <cmath>

#include "api/kernels/kernels.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> bruck_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Array> held{mine};  // held[i]: the piece of rank r + i
  for (int distance = 1; distance < p; distance *= 2) {
    const int count = std::min(distance, p - distance);
    std::vector<Array> outgoing(held.begin(), held.begin() + count);
    // The pieces travel as one message, stacked on a new leading axis (free: a real buffer is contiguous).
    Array incoming =
        comm.sendrecv(wrap(r - distance, p), kernels::stack(outgoing, 0).value, wrap(r + distance, p));
    for (int i = 0; i < count; ++i) held.push_back(kernels::take(incoming, 0, i).value);
  }
  std::vector<Array> pieces(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) pieces[wrap(r + i, p)] = held[i];
  return pieces;
}

double bruck_all_gather_cost(const CostInputs& c) {
  return std::ceil(std::log2(c.p)) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
