// NCCL's ring all-reduce: the vector cut into C contiguous parts, part c all-reduced by the ring of channel
// c (nccl_channel_rings), every channel at once (Communicator::in_parallel), each over its own connections.
// On one switch the channels share every device's port, so the time is one ring's; across nodes channel c
// crosses on NIC c, so C >= d channels use every NIC of a node where one ring uses one.
//
// Cost with the channels sharing every link evenly: 2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma
// (ring_all_reduce's; each channel pays the latencies once, concurrently).
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array nccl_ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  const int channels = nccl_ring_channels(comm, flat.size() / comm.size());
  const std::vector<Array> parts = split_flat(flat, channels);
  std::vector<Array> reduced(parts.size());
  comm.in_parallel(nccl_channel_rings(comm.dimensions(), channels), [&](Communicator& ring, int c) {
    reduced[static_cast<std::size_t>(c)] = ring_all_reduce(ring, parts[static_cast<std::size_t>(c)], op);
  });
  return join_flat(reduced);
}

}  // namespace spmdsim::collectives
