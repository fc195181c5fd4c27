// Hierarchical all-reduce over two levels of comm.dimensions() = {a, b, ...}: a ring reduce-scatter inside
// each group of a ranks (dimension 0, e.g. the devices of a node), a ring all-reduce of the reduced shards
// across the groups (the other dimensions flattened, one ring per shard index), and a ring all-gather
// inside each group. With one dimension it is the ring all-reduce.
//
//   dimensions {4, 2} (nodes 0-3 and 4-7):   reduce-scatter 0-1-2-3 and 4-5-6-7 (quarters)
//                                            all-reduce 0-4, 1-5, 2-6, 3-7 (one quarter each)
//                                            all-gather 0-1-2-3 and 4-5-6-7
//
// Cost (derived, the ring costs of the three steps; (a-1)/a + (b-1)/(ab) = (p-1)/p), b = p / a:
//   2 (a-1) alpha + 2 (b-1) alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
// The registry row has no dimensions, so it prices the flat shape {p}, where this equals ring.
#include <memory>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array hierarchical_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const std::vector<int> dimensions = comm.dimensions();
  if (dimensions.size() < 2) return ring_all_reduce(comm, flat, op);
  const std::vector<int> levels{dimensions[0], comm.size() / dimensions[0]};
  auto inside = comm.subgroup(dimension_group(levels, comm.rank(), 0));
  auto across = comm.subgroup(dimension_group(levels, comm.rank(), 1));
  Array shard = ring_reduce_scatter(*inside, split_flat(flat, inside->size()), op);
  shard = ring_all_reduce(*across, shard, op);
  return join_flat(ring_all_gather(*inside, shard, split_flat_shapes(flat, inside->size())));
}

double hierarchical_all_reduce_cost(const CostInputs& c, const std::vector<int>& dimensions) {
  if (dimensions.size() < 2) return ring_all_reduce_cost(c);
  const int a = dimensions[0];
  const int b = c.p / a;
  const double share = (c.p - 1.0) / c.p;
  return 2 * (a - 1) * c.alpha + 2 * (b - 1) * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
}

double hierarchical_all_reduce_flat_cost(const CostInputs& c) {
  return hierarchical_all_reduce_cost(c, {c.p});
}

}  // namespace spmdsim::collectives
