// Bruck all-to-all (Bruck et al. 1997; MPICH alltoall_intra_brucks.c): rank r first lines its blocks up
// by distance, held[i] = its block for r + i. At step k it sends every held block whose distance i has
// bit k set to r + 2^k, in one message, and puts what comes from r - 2^k in the same places. A block for
// distance i thus hops forward by the powers of two that make up i and arrives in ceil(lg p) steps; at the
// end held[i] is the block rank r - i sent to r, and a local rotation puts them in rank order.
//
//   p = 4, distances each step moves (every rank sends to r + 2^k, receives from r - 2^k):
//   step 0 (to r+1):  distances 1 and 3
//   step 1 (to r+2):  distances 2 and 3
//
// Cost: ceil(lg p) alpha + (n/p) B(p) beta, n what one rank sends in all (p blocks, its own included),
// B(p) = sum over i in 1..p-1 of popcount(i) the blocks a rank sends in all. For p a power of two,
// B(p) = (p/2) lg p and the cost is MPICH's lg p alpha + (n/2) lg p beta ([V-MPICH]
// alltoall_intra_brucks.c). For other p this is what the algorithm sends: the general formula in
// REFERENCES.md §3.1, ceil(lg p) alpha + ((n/2) lg p + (n/p)(p - 2^floor(lg p))) beta, overstates it
// (p = 3: 2 blocks = 0.67 n, not 1.13 n; p = 6: 7 blocks = 1.17 n, not 1.63 n). Every step is a shift
// by 2^k, a permutation of the ranks, and all ranks send equal messages, so on a switch no link carries
// two messages at once and the cost holds exactly. The rotations are local copies the model leaves out.
#include "api/kernels/kernels.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> bruck_all_to_all(Communicator& comm, const std::vector<Array>& blocks) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Array> held(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) held[i] = blocks[wrap(r + i, p)];
  for (int distance = 1; distance < p; distance *= 2) {
    std::vector<int> moving;  // the distances with this bit set
    for (int i = 1; i < p; ++i)
      if (i & distance) moving.push_back(i);
    std::vector<Array> outgoing;
    for (int i : moving) outgoing.push_back(held[i]);
    // The blocks travel as one message, stacked on a new leading axis (free: MPICH packs them likewise).
    Array incoming =
        comm.sendrecv(wrap(r + distance, p), kernels::stack(outgoing, 0).value, wrap(r - distance, p));
    for (std::size_t k = 0; k < moving.size(); ++k)
      held[moving[k]] = kernels::take(incoming, 0, static_cast<std::int64_t>(k)).value;
  }
  std::vector<Array> received(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) received[wrap(r - i, p)] = held[i];
  return received;
}

double bruck_all_to_all_cost(const CostInputs& c) {
  int steps = 0;
  double blocks_sent = 0;
  for (int distance = 1; distance < c.p; distance *= 2) {
    ++steps;
    for (int i = 1; i < c.p; ++i)
      if (i & distance) ++blocks_sent;
  }
  return steps * c.alpha + blocks_sent / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
