// Pipelined chain reduce (Open MPI's reduce "pipeline", ompi_coll_base_reduce_intra_pipeline: a chain of
// fan-out 1): the message is cut into
// k = comm.pipeline_chunks() pieces that travel from the far end root-1 towards the root; every rank adds
// its own piece to the partial it receives and passes the sum on.
//
//   p = 4, root 0, k = 3:   step   0    1    2    3    4
//                           3->2   a    b    c
//                           2->1        a    b    c
//                           1->0             a    b    c
//
// Cost (derived as for chain_broadcast.cpp, each hop also reducing its piece before passing it on):
//   (p - 1 + k - 1) (alpha + (n/k) beta + (n/k) gamma), exact when k divides the message.
// The registry row has no k, so it prices k = 1, the simulation's default.
#include <algorithm>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array chain_reduce(Communicator& comm, const Array& flat, ReduceOp op, int root) {
  const int p = comm.size();
  const int relative = wrap(comm.rank() - root, p);
  const int towards_root = wrap(comm.rank() - 1, p);
  const int from_far_end = wrap(comm.rank() + 1, p);
  std::vector<Array> pieces = split_flat(flat, std::max(1, comm.pipeline_chunks()));
  for (auto& piece : pieces) {
    if (relative < p - 1) piece = comm.combine(piece, comm.recv(from_far_end), op);
    if (relative > 0) comm.send(towards_root, piece);
  }
  return join_flat(pieces);
}

double chain_reduce_cost(const CostInputs& c, int chunks) {
  if (c.p == 1) return 0.0;
  return (c.p - 1 + chunks - 1) * (c.alpha + c.n / chunks * (c.beta + c.gamma));
}

double chain_reduce_unpipelined_cost(const CostInputs& c) {
  return chain_reduce_cost(c, 1);
}

}  // namespace spmdsim::collectives
