// Direct all-reduce: a pairwise-exchange reduce-scatter (step s: rank r sends rank r+s that rank's shard and
// reduces the shard of its own that r-s sends), then a direct all-gather (step s: r sends its reduced shard
// to r+s and receives the shard of r-s). Every pair of ranks talks directly, once per phase; on a
// non-blocking switch no two messages of a step share a link.
//
//   p = 4, rank 0:   step s = 1       s = 2        s = 3
//   reduce-scatter   shard1 -> 1      shard2 -> 2  shard3 -> 3     (and its own shard0 from 3, 2, 1)
//   all-gather       shard0 -> 1      shard0 -> 2  shard0 -> 3     (and shard3, shard2, shard1 from 3, 2, 1)
//
// Cost (MPICH reduce_scatter_block_intra_pairwise for the first phase; derived for the whole, REFERENCES.md
// §3.2): 2 (p-1) alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array direct_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  const std::vector<Array> shards = split_flat(flat, p);
  Array mine = shards[r];
  for (int s = 1; s < p; ++s) {
    const int to = wrap(r + s, p);
    const int from = wrap(r - s, p);
    mine = comm.combine(mine, comm.sendrecv(to, shards[to], from), op);
  }
  std::vector<Array> reduced(static_cast<std::size_t>(p));
  reduced[r] = mine;
  for (int s = 1; s < p; ++s) {
    const int from = wrap(r - s, p);
    reduced[from] = comm.sendrecv(wrap(r + s, p), mine, from);
  }
  return join_flat(reduced);
}

double direct_all_reduce_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return 2 * (c.p - 1) * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
