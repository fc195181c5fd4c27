// Pipelined chain broadcast (Open MPI's bcast "pipeline", ompi_coll_base_bcast_intra_pipeline: a chain of
// fan-out 1; SimGrid's bcast__ompi_pipeline): the message is cut into
// k = comm.pipeline_chunks() pieces that travel root -> root+1 -> ... -> root+p-1; every rank forwards a
// piece as soon as it has it, so after the chain fills every link carries one piece per step.
//
//   p = 4, k = 3:   step   0    1    2    3    4
//                   0->1   a    b    c
//                   1->2        a    b    c
//                   2->3             a    b    c
//
// Cost (derived: the last rank gets the first piece after p-1 steps and one more piece every step after
// that, each step one message of n/k bytes): (p - 1 + k - 1) (alpha + (n/k) beta), exact when k divides
// the message. The registry row has no k, so it prices k = 1, the simulation's default.
#include <algorithm>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array chain_broadcast(Communicator& comm, const Array& flat, int root) {
  const int p = comm.size();
  const int relative = wrap(comm.rank() - root, p);
  const int previous = wrap(comm.rank() - 1, p);
  const int next = wrap(comm.rank() + 1, p);
  std::vector<Array> pieces = split_flat(flat, std::max(1, comm.pipeline_chunks()));
  for (auto& piece : pieces) {
    if (relative > 0) piece = comm.recv(previous);
    if (relative < p - 1) comm.send(next, piece);
  }
  return join_flat(pieces);
}

double chain_broadcast_cost(const CostInputs& c, int chunks) {
  if (c.p == 1) return 0.0;
  return (c.p - 1 + chunks - 1) * (c.alpha + c.n / chunks * c.beta);
}

double chain_broadcast_unpipelined_cost(const CostInputs& c) {
  return chain_broadcast_cost(c, 1);
}

}  // namespace spmdsim::collectives
