// NCCL's ring reduce-scatter: every block cut into C parts, part c of every block reduce-scattered by the
// ring of channel c (nccl_channel_rings), every channel at once; this rank's block is its C reduced parts
// joined.
//
// Cost with the channels sharing every link evenly: (p-1) alpha + ((p-1)/p) n (beta + gamma)
// (ring_reduce_scatter's).
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array nccl_ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op) {
  const int p = comm.size();
  if (p == 1) return blocks.front();
  const int channels = nccl_ring_channels(comm, blocks.front().size());
  std::vector<std::vector<Array>> parts;  // parts[j][c]: part c of block j
  for (const Array& block : blocks)
    parts.push_back(split_flat(block.reshaped(Shape{block.size()}), channels));
  const auto rings = nccl_channel_rings(comm.dimensions(), channels);
  std::vector<Array> mine(static_cast<std::size_t>(channels));
  comm.in_parallel(rings, [&](Communicator& ring, int c) {
    std::vector<Array> ring_blocks;  // in ring c's rank order
    for (int j : rings[static_cast<std::size_t>(c)])
      ring_blocks.push_back(parts[static_cast<std::size_t>(j)][static_cast<std::size_t>(c)]);
    mine[static_cast<std::size_t>(c)] = ring_reduce_scatter(ring, ring_blocks, op);
  });
  return join_flat(mine).reshaped(blocks.front().shape());
}

}  // namespace spmdsim::collectives
