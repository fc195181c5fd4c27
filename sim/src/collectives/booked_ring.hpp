// The ring algorithms booked from their totals (Communicator::book_phase) in O(1) per device: the same phase
// (bytes each way, messages, reductions) and the same memory peak as ring_all_reduce, ring_all_gather and
// ring_reduce_scatter booked exchange by exchange through their verbs (sendrecv_staged and combine_staged,
// sendrecv_shaped and combine), without the p messages per device those walk through. At p = 1024 the walk
// is p^2 messages per collective, which is hours for a training step of hundreds of collectives; booked, it
// is microseconds.
// The ring's rows of the registry book their calls so on the phase-booking backend (Algorithm::booked), and
// each channel of NCCL's rings on abstract data books its part so. tests/aggregated_phases_test.cpp holds
// both to the per-message figures.
#pragma once

#include <cstdint>

#include "spmdsim/collective_algorithms.hpp"

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

// The ring rows' booked runs (BookedAllReduceFn and its kin). The all-reduce's values on real data are
// computed once for the whole group (Communicator::booked_values), bit for bit those of ring_all_reduce.
Array booked_ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
Array booked_ring_all_gather(Communicator& comm, const Array& mine);
Array booked_ring_reduce_scatter(Communicator& comm, const Array& block, ReduceOp op);

}  // namespace spmdsim::collectives
