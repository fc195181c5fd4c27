// NCCL's ring all-gather: every rank's piece cut into C parts, part c gathered by the ring of channel c
// (nccl_channel_rings), every channel at once; rank j's piece is its C parts joined again.
//
// Cost with the channels sharing every link evenly: (p-1) alpha + ((p-1)/p) n beta (ring_all_gather's).
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> nccl_ring_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  if (p == 1) return {mine};
  const int channels = nccl_ring_channels(comm, mine.size());
  const std::vector<Array> parts = split_flat(mine, channels);
  const auto rings = nccl_channel_rings(comm.dimensions(), channels);
  // by_rank[j][c]: part c of rank j's piece
  std::vector<std::vector<Array>> by_rank(static_cast<std::size_t>(p), std::vector<Array>(parts.size()));
  comm.in_parallel(rings, [&](Communicator& ring, int c) {
    const auto& order = rings[static_cast<std::size_t>(c)];
    const std::vector<Array> pieces = ring_all_gather(ring, parts[static_cast<std::size_t>(c)]);
    for (std::size_t r = 0; r < pieces.size(); ++r)
      by_rank[static_cast<std::size_t>(order[r])][static_cast<std::size_t>(c)] = pieces[r];
  });
  std::vector<Array> gathered;
  for (const auto& rank_parts : by_rank) gathered.push_back(join_flat(rank_parts));
  return gathered;
}

}  // namespace spmdsim::collectives
