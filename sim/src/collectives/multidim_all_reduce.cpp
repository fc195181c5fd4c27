// Multi-dimensional all-reduce, one algorithm per dimension as ASTRA-sim runs a hierarchical collective:
// reduce-scatter along dimension 0, then along dimension 1 on the piece that is left, ..., then all-gather
// back in reverse order. Each step runs inside the group of ranks that differ only in that dimension
// (dimension_group), so on a torus every step uses the links of one dimension. The algorithm of every
// dimension is ring for now: CostInputs and the registry have no per-dimension choice yet.
//
//   dimensions {2, 2} (ranks 0 1 / 2 3, dimension 0 across):
//     reduce-scatter along 0 (0-1, 2-3: halves)  ->  reduce-scatter along 1 (0-2, 1-3: quarters)
//     all-gather along 1 (0-2, 1-3)              ->  all-gather along 0 (0-1, 2-3)
//
// Cost (derived, the ring cost per dimension on the shrinking piece; the beta and gamma sums telescope):
//   2 sum_i (d_i - 1) alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
// The registry row has no dimensions, so it prices the flat shape {p}, where this equals ring.
#include <memory>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<int> dimension_group(const std::vector<int>& dimensions, int rank, int dimension) {
  int stride = 1;
  for (int d = 0; d < dimension; ++d) stride *= dimensions[static_cast<std::size_t>(d)];
  const int extent = dimensions[static_cast<std::size_t>(dimension)];
  const int base = rank - (rank / stride % extent) * stride;
  std::vector<int> group;
  for (int i = 0; i < extent; ++i) group.push_back(base + i * stride);
  return group;
}

Array multidim_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const std::vector<int> dimensions = comm.dimensions();
  std::vector<std::unique_ptr<Communicator>> groups;
  for (std::size_t d = 0; d < dimensions.size(); ++d)
    groups.push_back(comm.subgroup(dimension_group(dimensions, comm.rank(), static_cast<int>(d))));
  Array piece = flat;
  std::vector<std::vector<Array>> shapes;  // per dimension, the shapes of the chunks its reduce-scatter cut
  for (auto& group : groups) {
    shapes.push_back(split_flat_shapes(piece, group->size()));
    piece = ring_reduce_scatter(*group, split_flat(piece, group->size()), op);
  }
  for (std::size_t d = groups.size(); d-- > 0;) piece = join_flat(ring_all_gather(*groups[d], piece, shapes[d]));
  return piece;
}

double multidim_all_reduce_cost(const CostInputs& c, const std::vector<int>& dimensions) {
  int steps = 0;
  for (int d : dimensions) steps += d - 1;
  const double share = (c.p - 1.0) / c.p;
  return 2 * steps * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
}

double multidim_all_reduce_flat_cost(const CostInputs& c) {
  return multidim_all_reduce_cost(c, {c.p});
}

}  // namespace spmdsim::collectives
