// Multi-dimensional all-reduce, one algorithm per dimension as ASTRA-sim runs a hierarchical collective:
// reduce-scatter along dimension 0, then along dimension 1 on the piece that is left, ..., then all-gather
// back in reverse order. Each step runs inside the group of ranks that differ only in that dimension
// (dimension_group), so on a torus every step uses the links of one dimension. Each dimension runs the
// reduce-scatter and all-gather of its dimension algorithm (Communicator::dimension_algorithms(): ring,
// direct or halving_doubling; ring by default).
//
//   dimensions {2, 2} (ranks 0 1 / 2 3, dimension 0 across):
//     reduce-scatter along 0 (0-1, 2-3: halves)  ->  reduce-scatter along 1 (0-2, 1-3: quarters)
//     all-gather along 1 (0-2, 1-3)              ->  all-gather along 0 (0-1, 2-3)
//
// Cost (derived): the sum over dimensions of the reduce-scatter's and the all-gather's costs on d_i ranks for
// the piece entering dimension i (n_0 = n, n_{i+1} = n_i / d_i). With the ring everywhere the beta and gamma
// sums telescope: 2 sum_i (d_i - 1) alpha + 2 ((p-1)/p) n beta + ((p-1)/p) n gamma.
// The registry row has no dimensions, so it prices the flat shape {p}, where the ring makes this ring.
#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {

namespace {

int stride_of(const std::vector<int>& dimensions, int dimension) {
  int stride = 1;
  for (int d = 0; d < dimension; ++d) stride *= dimensions[static_cast<std::size_t>(d)];
  return stride;
}

}  // namespace

int coordinate(const std::vector<int>& dimensions, int rank, int dimension) {
  return rank / stride_of(dimensions, dimension) % dimensions[static_cast<std::size_t>(dimension)];
}

std::vector<int> dimension_group(const std::vector<int>& dimensions, int rank, int dimension) {
  const int stride = stride_of(dimensions, dimension);
  const int base = rank - coordinate(dimensions, rank, dimension) * stride;
  std::vector<int> group;
  for (int i = 0; i < dimensions[static_cast<std::size_t>(dimension)]; ++i) group.push_back(base + i * stride);
  return group;
}

namespace {

const DimensionAlgorithm& dimension_algorithm(std::string_view name) {
  for (const auto& a : dimension_algorithms())
    if (a.name == name) return a;
  throw std::logic_error("an unchecked dimension algorithm");
}

}  // namespace

std::vector<DimensionSubgroup> dimension_subgroups(Communicator& comm, const DimensionPlan& plan) {
  const std::vector<int> dimensions = comm.dimensions();
  std::vector<DimensionSubgroup> groups;
  for (int d : plan.order) {
    std::vector<int> members = dimension_group(dimensions, comm.rank(), d);
    if (plan.reversed) std::reverse(members.begin(), members.end());
    auto group = comm.subgroup(members);
    groups.push_back({d, std::move(members), std::move(group)});
  }
  return groups;
}

Array all_reduce_along_dimensions(Communicator& comm, const Array& flat, ReduceOp op,
                                  const DimensionPlan& plan) {
  const std::vector<DimensionSubgroup> groups = dimension_subgroups(comm, plan);
  const auto name_of = [&](std::size_t i) -> const std::string& {
    return plan.names[static_cast<std::size_t>(groups[i].dimension)];
  };
  Array piece = flat;
  std::vector<std::vector<Array>> shapes;  // per step, the shapes of the chunks its reduce-scatter cut
  for (std::size_t i = 0; i < groups.size(); ++i) {
    Communicator& group = *groups[i].comm;
    const std::string_view all_gather = dimension_algorithm(name_of(i)).all_gather;
    if (all_gather != "ring" && piece.size() % group.size() != 0)
      throw ValueError(fmt::format("multidim: '{}' along dimension {} needs its piece of {} elements divisible by "
                                   "{} (only the ring all-gather takes pieces of different sizes)",
                                   name_of(i), groups[i].dimension, piece.size(), group.size()));
    shapes.push_back(split_flat_shapes(piece, group.size()));
    piece = find_reduce_scatter(dimension_algorithm(name_of(i)).reduce_scatter)
                .run(group, split_flat(piece, group.size()), op);
  }
  for (std::size_t i = groups.size(); i-- > 0;) {
    const std::string_view all_gather = dimension_algorithm(name_of(i)).all_gather;
    // The ring is told the chunks' shapes, which may differ by one element (aggregated phases need them).
    piece = join_flat(all_gather == "ring" ? ring_all_gather(*groups[i].comm, piece, shapes[i])
                                           : find_all_gather(all_gather).run(*groups[i].comm, piece));
  }
  return piece;
}

Array multidim_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  DimensionPlan plan{.names = comm.dimension_algorithms()};
  plan.order.resize(comm.dimensions().size());
  std::iota(plan.order.begin(), plan.order.end(), 0);
  return all_reduce_along_dimensions(comm, flat, op, plan);
}

double multidim_all_reduce_cost(const CostInputs& c, const std::vector<int>& dimensions,
                                const std::vector<std::string>& names) {
  double total = 0;
  CostInputs step = c;
  for (std::size_t d = 0; d < dimensions.size(); ++d) {
    const DimensionAlgorithm& algorithm = dimension_algorithm(names.empty() ? "ring" : names[d]);
    step.p = dimensions[d];
    total += find_reduce_scatter(algorithm.reduce_scatter).cost(step) + find_all_gather(algorithm.all_gather).cost(step);
    step.n /= dimensions[d];
  }
  return total;
}

double multidim_all_reduce_flat_cost(const CostInputs& c) {
  return multidim_all_reduce_cost(c, {c.p}, {});
}

}  // namespace spmdsim::collectives
