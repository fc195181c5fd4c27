// Recursive-doubling all-gather (MPICH allgather_intra_recursive_doubling.c; Thakur, Rabenseifner & Gropp
// 2005): lg p steps; at step k rank r exchanges everything it holds, the 2^k pieces of its aligned group
// of 2^k ranks, with rank r XOR 2^k, so the pieces held double every step.
//
//   step 0:  r0 <-> r1   r2 <-> r3   r4 <-> r5   r6 <-> r7     1 piece each way
//   step 1:  r0 <-> r2   r1 <-> r3   r4 <-> r6   r5 <-> r7     2 pieces
//   step 2:  r0 <-> r4   r1 <-> r5   r2 <-> r6   r3 <-> r7     4 pieces
//
// Cost: lg p alpha + ((p-1)/p) n beta, n the gathered size ([V-MPICH] allgather_intra_recursive_doubling.c,
// REFERENCES.md §3.1). Every step pairs the ranks off, so on a switch no link carries two messages at once
// and the formula holds exactly. p must be a power of two: MPICH's extra steps for other counts (at most
// 2 floor(lg p) in all) have no closed form of this kind, so this algorithm refuses them.
#include <cmath>

#include "api/kernels/kernels.hpp"
#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

std::vector<Array> recursive_doubling_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Array> pieces(static_cast<std::size_t>(p));
  pieces[r] = mine;
  for (int held = 1; held < p; held *= 2) {
    // I hold the pieces of ranks [mine_first, mine_first + held); my partner holds the group next to it.
    const int partner = r ^ held;
    const int mine_first = r / held * held;
    const int theirs_first = partner / held * held;
    std::vector<Array> outgoing(pieces.begin() + mine_first, pieces.begin() + mine_first + held);
    // The pieces travel as one message, stacked on a new leading axis (free: a real buffer is contiguous).
    Array incoming = comm.sendrecv(partner, kernels::stack(outgoing, 0).value, partner);
    for (int i = 0; i < held; ++i) pieces[theirs_first + i] = kernels::take(incoming, 0, i).value;
  }
  return pieces;
}

double recursive_doubling_all_gather_cost(const CostInputs& c) {
  return std::log2(c.p) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
