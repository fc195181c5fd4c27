// The values ring_all_reduce leaves on every rank, computed once from all ranks' inputs instead of chunk by
// chunk on every device: for the booked ring on real data (shared_ring_reduction.hpp).
#pragma once

#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

// flats[r]: rank r's 1-d input (one shape and dtype for all). Piece k of split_flat is folded as the ring
// reduce-scatter folds it: rank k+1's piece first, then each next rank's piece combined in front of the
// running value, combine(mine, received), in the kernel's compute type and rounded once per step. Floating
// point sums depend on their order, so any other order could change the last bits; this one gives the
// per-message ring's result bit for bit.
Array ring_all_reduce_values(const std::vector<Array>& flats, ReduceOp op);

}  // namespace spmdsim::collectives
