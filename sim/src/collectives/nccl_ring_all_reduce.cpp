// NCCL's ring all-reduce: the vector cut into C contiguous parts, part c all-reduced by the ring of channel
// c (nccl_channel_rings), every channel at once (Communicator::in_parallel), each over its own connections.
// On one switch the channels share every device's port, so the time is one ring's; across nodes channel c
// crosses on NIC c, so C >= d channels use every NIC of a node where one ring uses one.
//
// On a platform with NCCL's figures (Platform::nccl) the call runs as NCCL runs it (nccl_protocols.hpp): the
// tuner's protocol, the channels the size earns, each part in passes of one chunk per rank (NCCL's loops),
// the protocol's wire bytes, rates and step latencies, reductions inside the channels' rate.
//
// Cost without NCCL's figures, the channels sharing every link evenly: 2(p-1) alpha + 2((p-1)/p) n beta +
// ((p-1)/p) n gamma (ring_all_reduce's; each channel pays the latencies once, concurrently).
//
// On abstract data under phase booking (Communicator::books) every channel's rings are booked from their
// totals (booked_ring.hpp) and simulated side by side on the device's one actor: O(1) per channel.
#include "collectives/algorithms.hpp"
#include "collectives/booked_ring.hpp"
#include "collectives/chunks.hpp"
#include "collectives/nccl_protocols.hpp"

namespace spmdsim::collectives {

Array nccl_ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  const auto plan = nccl_ring_plan(comm, CollectiveKind::all_reduce, flat.size() / comm.size(),
                                   static_cast<std::int64_t>(itemsize(flat.dtype())));
  const std::vector<Array> parts = split_flat(flat, plan.channels);
  const auto rings = nccl_channel_rings(comm.dimensions(), plan.channels);
  const std::int64_t pass = plan.loop_elements * comm.size();
  if (comm.books(flat)) {
    comm.book_in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
      book_ring_all_reduce(ring, {parts[static_cast<std::size_t>(c)].size(), pass}, flat.dtype(), op);
    });
    return Array::abstract(flat.shape(), flat.dtype());
  }
  std::vector<Array> reduced(parts.size());
  comm.in_parallel(rings, plan.channel, [&](Communicator& ring, int c) {
    std::vector<Array> passes;
    for (const Array& piece : pieces_of(parts[static_cast<std::size_t>(c)], pass))
      passes.push_back(ring_all_reduce(ring, piece, op));
    reduced[static_cast<std::size_t>(c)] = join_flat(passes);
  });
  return join_flat(reduced);
}

}  // namespace spmdsim::collectives
