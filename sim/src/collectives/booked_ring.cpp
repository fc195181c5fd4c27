#include "collectives/booked_ring.hpp"

#include <vector>

#include "collectives/chunks.hpp"
#include "collectives/reduction_values.hpp"

namespace spmdsim::collectives {
namespace {

// split_flat's pieces of n elements over p ranks: the first n % p have one element more.
struct FlatPieces {
  std::int64_t n;
  int p;
  std::int64_t size(int i) const { return split_flat_size(n, p, wrap(i, p)); }
};

// The passes pieces_of cuts: `count` passes of `elements` each (a run has at most two such groups).
struct PassGroup {
  std::int64_t elements;
  std::int64_t count;
};

std::vector<PassGroup> pass_groups(RingPasses passes) {
  if (passes.pass <= 0 || passes.elements <= passes.pass) return {{passes.elements, 1}};
  std::vector<PassGroup> groups{{passes.pass, passes.elements / passes.pass}};
  if (passes.elements % passes.pass != 0) groups.push_back({passes.elements % passes.pass, 1});
  return groups;
}

// The reductions of a reduce-scatter that folds every piece but `skipped`: each piece's own kernel time,
// priced once per distinct size (there are at most two).
Seconds reductions(const Communicator& comm, const FlatPieces& pieces, int skipped, DType dtype,
                   ReduceOp op) {
  const std::int64_t base = pieces.n / pieces.p;
  const std::int64_t larger = pieces.n % pieces.p;  // pieces of base + 1
  const std::int64_t skipped_larger = pieces.size(skipped) > base ? 1 : 0;
  return static_cast<double>(larger - skipped_larger) *
             comm.reduction_time(Array::abstract({base + 1}, dtype), op) +
         static_cast<double>(pieces.p - larger - (1 - skipped_larger)) *
             comm.reduction_time(Array::abstract({base}, dtype), op);
}

Array scratch(Communicator& comm, std::int64_t elements, DType dtype) {
  return comm.hold_scratch(Array::abstract({elements}, dtype));
}

int next(const Communicator& comm) {
  return wrap(comm.rank() + 1, comm.size());
}
int previous(const Communicator& comm) {
  return wrap(comm.rank() - 1, comm.size());
}

}  // namespace

void book_ring_all_reduce(Communicator& comm, RingPasses passes, DType dtype, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  const auto item = static_cast<Bytes>(itemsize(dtype));
  for (const PassGroup& group : pass_groups(passes)) {
    const FlatPieces pieces{group.elements, p};
    // Reduce-scatter sends every piece but r and folds every piece but r-1; the all-gather sends every piece
    // but r+1. Both run with the same neighbours: one phase, as sendrecv_shaped books them.
    const Bytes sent = (2 * pieces.n - pieces.size(r) - pieces.size(r + 1)) * item;
    comm.book_phase(next(comm), previous(comm), sent * group.count,
                    2 * (p - 1) * static_cast<int>(group.count),
                    static_cast<double>(group.count) * reductions(comm, pieces, r - 1, dtype, op));
    // Held and released at once: ring_all_reduce's output buffer, all it holds (its pieces in flight are
    // staged); nothing of a pass outlives it.
    scratch(comm, pieces.n, dtype);
  }
}

Array book_ring_all_gather(Communicator& comm, RingPasses passes, DType dtype) {
  const int p = comm.size();
  std::int64_t count = 0;
  for (const PassGroup& group : pass_groups(passes)) count += group.count;
  comm.book_phase(next(comm), previous(comm), passes.elements * static_cast<Bytes>(itemsize(dtype)) * (p - 1),
                  (p - 1) * static_cast<int>(count), 0);
  return scratch(comm, passes.elements * (p - 1), dtype);
}

Array book_ring_reduce_scatter(Communicator& comm, RingPasses passes, DType dtype, ReduceOp op) {
  const int p = comm.size();
  Seconds reducing = 0;
  std::int64_t count = 0;
  for (const PassGroup& group : pass_groups(passes)) {
    reducing += static_cast<double>(group.count * (p - 1)) *
                comm.reduction_time(Array::abstract({group.elements}, dtype), op);
    count += group.count;
  }
  comm.book_phase(next(comm), previous(comm), passes.elements * static_cast<Bytes>(itemsize(dtype)) * (p - 1),
                  (p - 1) * static_cast<int>(count), reducing);
  // All ring_reduce_scatter holds: each pass's reduced block, its output (the partials in flight are staged).
  return scratch(comm, passes.elements, dtype);
}

Array booked_ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  return comm.booked_values(flat, op, &ring_all_reduce_values,
                            [&] { book_ring_all_reduce(comm, {flat.size()}, flat.dtype(), op); });
}

Array booked_ring_all_gather(Communicator& comm, const Array& mine) {
  if (comm.size() == 1) return Array::abstract(Shape{0}, mine.dtype());  // no other rank's piece to hold
  return book_ring_all_gather(comm, {mine.size()}, mine.dtype());
}

Array booked_ring_reduce_scatter(Communicator& comm, const Array& block, ReduceOp op) {
  if (comm.size() == 1) return block;  // its own block, as ring_reduce_scatter returns it
  return book_ring_reduce_scatter(comm, {block.size()}, block.dtype(), op);
}

}  // namespace spmdsim::collectives
