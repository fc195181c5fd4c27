// The all-gather of a torus that drives every link of a device at once (torus_parts.cpp): every rank's piece
// cut into up to 2k parts, part c gathered by ring all-gathers along its dimensions in turn, each ring
// gathering what the one before it gathered.
//
//   torus {2, 2}, part 0 (x then y)    after x: r0 holds [p0 p1]    after y: r0 holds [p0 p1 p2 p3]
//     ranks  0 1                        r2 holds [p2 p3]
//            2 3
//
// Cost on a torus of equal sides d_i, parts of m = n / 2k of the gathered n: each part takes the ring's
// steps along every dimension, sum_i (d_i - 1) alpha + ((p-1)/p) m beta, and the parts overlap, so the
// bandwidth term is the ring's over 2k (REFERENCES.md §3.4: "gathering over k mesh axes multiplies the
// available bandwidth by k", and both ways of a link). A group without dimensions runs two rings, one each
// way. The registry row prices the ring: where the ports are shared, a switch, the parts share them too.
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {
namespace {

// Part c's all-gather: along each dimension of plan.order, the ring all-gather of what is held, each
// member's piece placed by its coordinate along that dimension; so the pieces end ordered by the ranks'
// coordinates, the last dimension gathered the most significant.
Array all_gather_along_dimensions(Communicator& comm, const Array& mine, const DimensionPlan& plan) {
  const std::vector<int> dimensions = comm.dimensions();
  Array held = mine;
  for (const DimensionSubgroup& group : dimension_subgroups(comm, plan)) {
    const std::vector<Array> gathered = ring_all_gather(*group.comm, held);
    std::vector<Array> by_coordinate(gathered.size());
    for (std::size_t j = 0; j < gathered.size(); ++j)
      by_coordinate[static_cast<std::size_t>(coordinate(dimensions, group.members[j], group.dimension))] =
          gathered[j];
    held = join_flat(by_coordinate);
  }
  return held;
}

}  // namespace

std::vector<Array> torus_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  if (p == 1 || mine.size() == 0) return std::vector<Array>(static_cast<std::size_t>(p), mine);
  const int parts = torus_part_count(comm, mine.size());
  const std::vector<Array> pieces = split_flat(mine, parts);
  std::vector<std::vector<Array>> by_rank(static_cast<std::size_t>(p),
                                          std::vector<Array>(static_cast<std::size_t>(parts)));
  on_torus_parts(comm, parts, [&](Communicator& lane, int c, const DimensionPlan& plan) {
    const std::vector<Array> gathered =
        split_flat(all_gather_along_dimensions(lane, pieces[static_cast<std::size_t>(c)], plan), p);
    const std::vector<int> dimensions = lane.dimensions();
    const std::vector<int> most_significant_first(plan.order.rbegin(), plan.order.rend());
    for (int r = 0; r < p; ++r)
      by_rank[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] =
          gathered[static_cast<std::size_t>(digit_position(dimensions, most_significant_first, r))];
  });
  std::vector<Array> out;
  for (const auto& rank_parts : by_rank) out.push_back(join_flat(rank_parts));
  return out;
}

}  // namespace spmdsim::collectives
