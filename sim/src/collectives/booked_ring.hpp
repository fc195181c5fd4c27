// The ring algorithms under SimulationOptions::aggregate_ring_phases (the all-reduce on any data, all-gather
// and reduce-scatter on abstract data), booked from their totals in O(1) per device: the same phase (bytes
// each way, messages, reductions) and the same memory peak as ring_all_reduce, ring_all_gather and
// ring_reduce_scatter booked exchange by exchange through sendrecv_shaped and combine, without making the p
// pieces per device those walk through. At p = 1024 the walk is p^2 pieces, and ledger entries, per
// collective, which is hours for a training step of hundreds of collectives; booked, it is microseconds.
// tests/aggregated_phases_test.cpp holds both to the same figures.
#pragma once

#include "collectives/device_communicator.hpp"

namespace spmdsim::detail {

// psum and its kin: the reduced flat array, unplaced as ring_all_reduce returns it. Abstract data is
// booked alone; real data also has its values computed once for the whole group, bit for bit those of
// ring_all_reduce, and shared by every member (shared_reduction.hpp).
Array booked_ring_all_reduce(DeviceCommunicator& comm, const Array& flat, ReduceOp op);

// all_gather of `mine`: the scratch that holds the other ranks' pieces, which the caller keeps until the
// gathered result is placed, as the per-message pieces are kept.
Array booked_ring_all_gather_scratch(DeviceCommunicator& comm, const Array& mine);

// psum_scatter: this rank's reduced block (shaped like `block`, every rank's block alike), placed as scratch
// as ring_reduce_scatter leaves it.
Array booked_ring_reduce_scatter(DeviceCommunicator& comm, const Array& block, ReduceOp op);

}  // namespace spmdsim::detail
