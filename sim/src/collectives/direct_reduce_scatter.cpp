// Direct reduce-scatter: every rank posts block j to rank j for every j at once, receives the p-1 blocks
// meant for it one by one, from r-1, r-2, ..., r-(p-1), then reduces the p blocks in rank order.
//
//   r0 -b1-> r1, -b2-> r2, -b3-> r3      all sends posted at the start
//   r1 -b2-> r2, -b3-> r3, -b0-> r0
//   ...                                  receive round s: every rank r takes its block from r - s
//   r: b_r = b_r(r0) + b_r(r1) + ... + b_r(r{p-1})
//
// Cost: (p-1) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma, n the size of all p blocks: derived here for
// SimGrid on a switch (one up-link and one down-link per device, full duplex), not a published figure.
// The one-shot figure, alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma, needs every receive posted at once,
// which the Communicator cannot express (see direct_all_gather.cpp for the derivation of both): a SimGrid
// transfer starts when its receive is posted and Communicator::recv waits for its message, so the p-1
// transfers into a rank run in p-1 rounds, each a permutation of n/p-byte messages taking
// alpha + (n/p) beta. The p-1 reductions of n/p bytes follow, (p-1)(n/p) gamma.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array direct_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  for (int s = 1; s < p; ++s) comm.send(wrap(r + s, p), blocks[wrap(r + s, p)]);
  std::vector<Array> mine(static_cast<std::size_t>(p));  // mine[j]: rank j's block for me
  mine[r] = blocks[r];
  for (int s = 1; s < p; ++s) mine[wrap(r - s, p)] = comm.recv(wrap(r - s, p));
  Array sum = mine[0];
  for (int j = 1; j < p; ++j) sum = comm.combine(sum, mine[j], op);
  return sum;
}

double direct_reduce_scatter_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return (c.p - 1) * c.alpha + share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
