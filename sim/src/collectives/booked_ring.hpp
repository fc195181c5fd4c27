// The ring algorithms booked from their totals (Communicator::book_phase) in O(1) per device: the same phase
// (bytes each way, messages, reductions) and the same memory peak as ring_all_reduce, ring_all_gather and
// ring_reduce_scatter booked exchange by exchange through their verbs (sendrecv_staged and combine_staged,
// sendrecv_shaped and combine), without the p messages per device those walk through. At p = 1024 the walk
// is p^2 messages per collective, which is hours for a training step of hundreds of collectives; booked, it
// is microseconds.
// The ring under SimulationOptions::aggregate_ring_phases (the all-reduce on any data, all-gather and
// reduce-scatter on abstract data) and each channel of NCCL's rings on abstract data are booked so.
// tests/aggregated_phases_test.cpp holds both to the per-message figures.
#pragma once

#include <cstdint>

#include "collectives/device_communicator.hpp"

namespace spmdsim::collectives {

// A run of ring calls over consecutive passes of `elements`, each pass of at most `pass` elements (0: one
// pass), as nccl_ring cuts a channel's part (pieces_of).
struct RingPasses {
  std::int64_t elements;
  std::int64_t pass = 0;
};

// ring_all_reduce of every pass (its vector, every rank alike).
void book_ring_all_reduce(Communicator& comm, RingPasses passes, DType dtype, ReduceOp op);
// ring_all_gather of every pass (this rank's piece, every rank's alike): the scratch that holds the other
// ranks' pieces, which the caller keeps as long as the walked run keeps them.
Array book_ring_all_gather(Communicator& comm, RingPasses passes, DType dtype);
// ring_reduce_scatter of every pass (one block, every block alike): this rank's reduced passes, as scratch.
Array book_ring_reduce_scatter(Communicator& comm, RingPasses passes, DType dtype, ReduceOp op);

}  // namespace spmdsim::collectives

namespace spmdsim::detail {

// psum and its kin: the reduced flat array, unplaced as ring_all_reduce returns it. Abstract data is
// booked alone; real data also has its values computed once for the whole group, bit for bit those of
// ring_all_reduce, and shared by every member (shared_reduction.hpp).
Array booked_ring_all_reduce(DeviceCommunicator& comm, const Array& flat, ReduceOp op);

}  // namespace spmdsim::detail
