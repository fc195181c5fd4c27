// The reduce-scatter of a torus that drives every link of a device at once (torus_parts.cpp): every block
// cut into up to 2k parts, part c reduce-scattered by ring reduce-scatters along its dimensions in turn,
// each on what the one before it left: along a dimension, a member gets the blocks of the ranks that share
// its coordinate there.
//
//   torus {2, 2}, part 0 (x then y)    after x: r0 holds b0 b2 summed over {r0, r1}
//     ranks  0 1                        after y: r0 holds b0 summed over all four
//            2 3
//
// Cost on a torus of equal sides d_i, parts of m = n / 2k of the n scattered: each part takes the ring's
// steps along every dimension, sum_i (d_i - 1) alpha + ((p-1)/p) m (beta + gamma), and the parts overlap, so
// the bandwidth term is the ring's over 2k (REFERENCES.md §3.4). A group without dimensions runs two rings,
// one each way. The registry row prices the ring: where the ports are shared, a switch, the parts share them.
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {
namespace {

// Part c's reduce-scatter: `flat` holds every rank's block, ordered by the ranks' coordinates along
// plan.order, the first the most significant; along each dimension, the ring reduce-scatter of what is
// held, each member's block the slice its coordinate there selects. What is left is this rank's block.
Array reduce_scatter_along_dimensions(Communicator& comm, const Array& flat, ReduceOp op,
                                      const DimensionPlan& plan) {
  const std::vector<int> dimensions = comm.dimensions();
  Array held = flat;
  for (const DimensionSubgroup& group : dimension_subgroups(comm, plan)) {
    const std::vector<Array> slices = split_flat(held, static_cast<int>(group.members.size()));
    std::vector<Array> blocks;
    for (int member : group.members)
      blocks.push_back(slices[static_cast<std::size_t>(coordinate(dimensions, member, group.dimension))]);
    held = ring_reduce_scatter(*group.comm, blocks, op);
  }
  return held;
}

}  // namespace

Array torus_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  const Array& like = blocks.front();
  if (p == 1 || like.size() == 0) return like;
  const int parts = torus_part_count(comm, like.size());
  std::vector<std::vector<Array>> block_parts;  // block_parts[r][c]: part c of rank r's block
  for (const Array& block : blocks) block_parts.push_back(split_flat(block.reshaped(Shape{block.size()}), parts));
  std::vector<Array> mine(static_cast<std::size_t>(parts));
  on_torus_parts(comm, parts, [&](Communicator& lane, int c, const DimensionPlan& plan) {
    const std::vector<int> dimensions = lane.dimensions();
    std::vector<Array> ordered(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      ordered[static_cast<std::size_t>(digit_position(dimensions, plan.order, r))] =
          block_parts[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
    mine[static_cast<std::size_t>(c)] = reduce_scatter_along_dimensions(lane, join_flat(ordered), op, plan);
  });
  return join_flat(mine).reshaped(like.shape());
}

}  // namespace spmdsim::collectives
