// NCCL's ring all-gather: every rank's piece cut into C parts, part c gathered by the ring of channel c
// (nccl_channel_rings), every channel at once; rank j's piece is its C parts joined again. On a platform with
// NCCL's figures, as NCCL runs it (nccl_ring_all_reduce.cpp): each part in passes of one chunk per rank.
//
// Cost without NCCL's figures, the channels sharing every link evenly: (p-1) alpha + ((p-1)/p) n beta
// (ring_all_gather's). On abstract data under phase booking, booked as nccl_ring_all_reduce.cpp says.
#include "collectives/algorithms.hpp"
#include "collectives/booked_ring.hpp"
#include "collectives/chunks.hpp"
#include "collectives/nccl_protocols.hpp"

namespace spmdsim::collectives {

std::vector<Array> nccl_ring_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  if (p == 1) return {mine};
  const auto plan = nccl_ring_plan(comm, CollectiveKind::all_gather, mine.size(),
                                   static_cast<std::int64_t>(itemsize(mine.dtype())));
  const std::vector<Array> parts = split_flat(mine, plan.channels);
  const auto rings = nccl_channel_rings(comm.dimensions(), plan.channels);
  if (comm.books(mine)) {
    comm.book_in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
      book_ring_all_gather(ring, {parts[static_cast<std::size_t>(c)].size(), plan.loop_elements}, mine.dtype());
    });
    return std::vector<Array>(static_cast<std::size_t>(p), Array::abstract(mine.shape(), mine.dtype()));
  }
  // by_rank[j][c]: part c of rank j's piece
  std::vector<std::vector<Array>> by_rank(static_cast<std::size_t>(p), std::vector<Array>(parts.size()));
  comm.in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
    const auto& order = (*rings)[static_cast<std::size_t>(c)];
    std::vector<std::vector<Array>> passes(
        static_cast<std::size_t>(p));  // passes[r]: ring rank r's, in order
    for (const Array& pass : pieces_of(parts[static_cast<std::size_t>(c)], plan.loop_elements)) {
      const std::vector<Array> pieces = ring_all_gather(ring, pass);
      for (std::size_t r = 0; r < pieces.size(); ++r) passes[r].push_back(pieces[r]);
    }
    for (std::size_t r = 0; r < passes.size(); ++r)
      by_rank[static_cast<std::size_t>(order[r])][static_cast<std::size_t>(c)] = join_flat(passes[r]);
  });
  std::vector<Array> gathered;
  for (const auto& rank_parts : by_rank) gathered.push_back(join_flat(rank_parts));
  return gathered;
}

}  // namespace spmdsim::collectives
