// Pairwise-exchange all-to-all: p-1 steps; at step s rank r sends its block for r+s and receives the
// block from r-s, so every pair exchanges exactly once and no link carries two messages of one step on a
// switch.
//
// Cost: (p-1) alpha + ((p-1)/p) n beta, n the data a rank sends in all.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> pairwise_all_to_all(Communicator& comm, const std::vector<Array>& blocks) {
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<Array> received(static_cast<std::size_t>(p));
  received[r] = blocks[r];
  for (int s = 1; s < p; ++s) {
    const int to = wrap(r + s, p);
    const int from = wrap(r - s, p);
    received[from] = comm.sendrecv(to, blocks[to], from);
  }
  return received;
}

double pairwise_all_to_all_cost(const CostInputs& c) {
  return (c.p - 1) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
