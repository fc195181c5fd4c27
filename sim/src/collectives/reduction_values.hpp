// The values an all-reduce leaves on every rank, computed once from all ranks' inputs instead of chunk by
// chunk on every device (shared_reduction.hpp): the ring's, for the booked ring on real data, and the
// switch's, for NVLS.
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

// Every element folded over the ranks in rank order, rank r's value combined with the running value of ranks
// 0..r-1 in the kernel's compute type and rounded once per rank: the switch's reduction (NVLS), which reads
// the ranks' values and reduces them as they come.
Array rank_order_all_reduce_values(const std::vector<Array>& flats, ReduceOp op);

}  // namespace spmdsim::collectives
