// Direct all-to-all: every rank posts its block for j to every rank j at once, then receives the blocks
// meant for it one by one, from r-1, r-2, ..., r-(p-1).
//
//   r0 -b01-> r1, -b02-> r2, -b03-> r3      all sends posted at the start
//   r1 -b12-> r2, -b13-> r3, -b10-> r0
//   ...                                     receive round s: every rank r takes its block from r - s
//
// Cost: (p-1) alpha + ((p-1)/p) n beta, n what one rank sends in all (p blocks, its own included): derived
// here for SimGrid on a switch (one up-link and one down-link per device, full duplex), not a published
// figure; the same as pairwise exchange's. The one-shot figure, alpha + ((p-1)/p) n beta, needs every
// receive posted at once, which the Communicator cannot express (see direct_all_gather.cpp for the
// derivation of both): a SimGrid transfer starts when its receive is posted and Communicator::recv waits
// for its message, so the p-1 transfers into a rank run in p-1 rounds, each a permutation of n/p-byte
// messages taking alpha + (n/p) beta.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> direct_all_to_all(Communicator& comm, const std::vector<Array>& blocks) {
  const int p = comm.size();
  const int r = comm.rank();
  for (int s = 1; s < p; ++s) comm.send(wrap(r + s, p), blocks[wrap(r + s, p)]);
  std::vector<Array> received(static_cast<std::size_t>(p));
  received[r] = blocks[r];
  for (int s = 1; s < p; ++s) received[wrap(r - s, p)] = comm.recv(wrap(r - s, p));
  return received;
}

double direct_all_to_all_cost(const CostInputs& c) {
  return (c.p - 1) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
