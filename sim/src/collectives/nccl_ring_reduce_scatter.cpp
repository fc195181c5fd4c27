// NCCL's ring reduce-scatter: every block cut into C parts, part c of every block reduce-scattered by the
// ring of channel c (nccl_channel_rings), every channel at once; this rank's block is its C reduced parts
// joined. On a platform with NCCL's figures, as NCCL runs it (nccl_ring_all_reduce.cpp): each part in passes
// of one chunk per block.
//
// Cost without NCCL's figures, the channels sharing every link evenly: (p-1) alpha + ((p-1)/p) n (beta +
// gamma) (ring_reduce_scatter's). On abstract data under phase booking, booked as nccl_ring_all_reduce.cpp
// says.
#include "collectives/algorithms.hpp"
#include "collectives/booked_ring.hpp"
#include "collectives/chunks.hpp"
#include "collectives/nccl_protocols.hpp"

namespace spmdsim::collectives {

Array nccl_ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  if (p == 1) return blocks.front();
  const auto plan = nccl_ring_plan(comm, CollectiveKind::reduce_scatter, blocks.front().size(),
                                   static_cast<std::int64_t>(itemsize(blocks.front().dtype())));
  const auto rings = nccl_channel_rings(comm.dimensions(), plan.channels);
  if (comm.books(blocks.front())) {
    const std::vector<Array> block_parts = split_flat_shapes(blocks.front().reshaped(Shape{blocks.front().size()}),
                                                             plan.channels);
    comm.book_in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
      book_ring_reduce_scatter(ring, {block_parts[static_cast<std::size_t>(c)].size(), plan.loop_elements},
                               blocks.front().dtype(), op);
    });
    return Array::abstract(blocks.front().shape(), blocks.front().dtype());
  }
  std::vector<std::vector<Array>> parts;  // parts[j][c]: part c of block j
  for (const Array& block : blocks)
    parts.push_back(split_flat(block.reshaped(Shape{block.size()}), plan.channels));
  std::vector<Array> mine(static_cast<std::size_t>(plan.channels));
  comm.in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
    std::vector<std::vector<Array>> block_passes;  // in ring c's rank order: each block's passes
    for (int j : (*rings)[static_cast<std::size_t>(c)])
      block_passes.push_back(
          pieces_of(parts[static_cast<std::size_t>(j)][static_cast<std::size_t>(c)], plan.loop_elements));
    std::vector<Array> reduced;
    for (std::size_t k = 0; k < block_passes.front().size(); ++k) {
      std::vector<Array> ring_blocks;
      for (const auto& passes : block_passes) ring_blocks.push_back(passes[k]);
      reduced.push_back(ring_reduce_scatter(ring, ring_blocks, op));
    }
    mine[static_cast<std::size_t>(c)] = join_flat(reduced);
  });
  return join_flat(mine).reshaped(blocks.front().shape());
}

}  // namespace spmdsim::collectives
