#include "collectives/booked_ring.hpp"

#include <algorithm>

#include "collectives/chunks.hpp"
#include "collectives/reduction_values.hpp"
#include "collectives/shared_reduction.hpp"

namespace spmdsim::detail {
namespace {

// split_flat's pieces of n elements over p ranks: the first n % p have one element more.
struct FlatPieces {
  std::int64_t n;
  int p;
  std::int64_t size(int i) const {
    const int k = collectives::wrap(i, p);
    return collectives::split_flat_offset(n, p, k + 1) - collectives::split_flat_offset(n, p, k);
  }
};

// The scratch elements live at the peak of ring_reduce_scatter on rank r: at step s it receives piece
// r-s-2 and folds it into a new buffer (2 pieces at once) while keeping the s folded pieces before it.
std::int64_t reduce_scatter_peak(const FlatPieces& pieces, int r) {
  // Pieces of at least one element never shrink by more than one from step to step, so the last step is
  // the peak: every piece but r-1 folded, r counted twice.
  if (pieces.n >= pieces.p) return pieces.n - pieces.size(r - 1) + pieces.size(r);
  std::int64_t kept = 0, peak = 0;
  for (int s = 0; s < pieces.p - 1; ++s) {
    const std::int64_t piece = pieces.size(r - s - 2);
    peak = std::max(peak, kept + 2 * piece);
    kept += piece;
  }
  return peak;
}

// The reductions of a reduce-scatter that folds every piece but `skipped`: each piece's own kernel time,
// priced once per distinct size (there are at most two).
Seconds reductions(const DeviceCommunicator& comm, const FlatPieces& pieces, int skipped, DType dtype,
                   ReduceOp op) {
  const std::int64_t base = pieces.n / pieces.p;
  const std::int64_t larger = pieces.n % pieces.p;  // pieces of base + 1
  const std::int64_t skipped_larger = pieces.size(skipped) > base ? 1 : 0;
  return static_cast<double>(larger - skipped_larger) * comm.reduction_time(Array::abstract({base + 1}, dtype), op) +
         static_cast<double>(pieces.p - larger - (1 - skipped_larger)) *
             comm.reduction_time(Array::abstract({base}, dtype), op);
}

Array scratch(DeviceCommunicator& comm, std::int64_t elements, DType dtype) {
  return comm.context().place(Array::abstract({elements}, dtype), MemoryTag::collective_scratch,
                              "ring phase scratch");
}

}  // namespace

Array booked_ring_all_reduce(DeviceCommunicator& comm, const Array& flat, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  DeviceContext& ctx = comm.context();
  std::shared_ptr<SharedReduction> values;
  if (!flat.is_abstract()) {
    values = ctx.call().shared_reductions.join(ctx.rank(), ctx.track(), comm.group(),
                                               &collectives::ring_all_reduce_values);
    values->contribute(r, flat, op);
  }
  const FlatPieces pieces{flat.size(), p};
  const auto item = static_cast<Bytes>(itemsize(flat.dtype()));
  // Reduce-scatter sends every piece but r and folds every piece but r-1; the all-gather sends every piece
  // but r+1. Both run with the same neighbours: one phase, as sendrecv_shaped books them.
  const Bytes sent = (2 * pieces.n - pieces.size(r) - pieces.size(r + 1)) * item;
  comm.book_phase(collectives::wrap(r + 1, p), collectives::wrap(r - 1, p), sent, 2 * (p - 1),
                  reductions(comm, pieces, r - 1, flat.dtype(), op));
  // Held and released at once: the reduce-scatter's peak, or the all-gather's (every piece held at its end),
  // whichever is higher; nothing of either outlives the algorithm.
  scratch(comm, std::max(reduce_scatter_peak(pieces, r), pieces.n), flat.dtype());
  if (flat.is_abstract()) return Array::abstract(flat.shape(), flat.dtype());
  comm.finish();  // the phase first: then waiting for the values takes no simulated time if all arrived
  return values->result();
}

Array booked_ring_all_gather_scratch(DeviceCommunicator& comm, const Array& mine) {
  const int p = comm.size();
  const int r = comm.rank();
  comm.book_phase(collectives::wrap(r + 1, p), collectives::wrap(r - 1, p),
                  static_cast<Bytes>(mine.nbytes()) * (p - 1), p - 1, 0);
  return scratch(comm, mine.size() * (p - 1), mine.dtype());
}

Array booked_ring_reduce_scatter(DeviceCommunicator& comm, const Array& block, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  comm.book_phase(collectives::wrap(r + 1, p), collectives::wrap(r - 1, p),
                  static_cast<Bytes>(block.nbytes()) * (p - 1), p - 1,
                  (p - 1) * comm.reduction_time(Array::abstract(block.shape(), block.dtype()), op));
  // At the last step p-2 folded blocks, the one received and the one folded from it (which stays) are held.
  const Array folded_before = scratch(comm, block.size() * (p - 1), block.dtype());  // released on return
  return comm.context().place(Array::abstract(block.shape(), block.dtype()), MemoryTag::collective_scratch,
                              "psum_scatter");
}

}  // namespace spmdsim::detail
