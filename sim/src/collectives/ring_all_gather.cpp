// Ring all-gather as NCCL's runRing runs it (src/device/all_gather.h): p-1 steps; at step s rank r forwards
// the block of rank r-s to r+1 and receives the block of rank r-s-1 from r-1. Each block received is written
// into the call's output buffer, held from the start, and forwarded from there: the blocks share that one
// buffer (Communicator::sendrecv_staged, then the buffer's allocation), none is a buffer of its own.
//
//   r0 -> r1 -> r2 -> r3 -> r0     each arrow carries one piece per step
//
// Cost: (p-1) alpha + ((p-1)/p) n beta, n the gathered size.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine) {
  return ring_all_gather(comm, mine, std::vector<Array>(static_cast<std::size_t>(comm.size()), mine));
}

std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine, const std::vector<Array>& like) {
  const int p = comm.size();
  const int r = comm.rank();
  if (p == 1) return {mine};
  std::int64_t others = 0;
  for (int k = 0; k < p; ++k)
    if (k != r) others += like[static_cast<std::size_t>(k)].size();
  // The other ranks' blocks, in this rank's memory as long as the caller keeps any of them.
  const Array output = comm.hold_scratch(Array::abstract(Shape{others}, mine.dtype()));
  std::vector<Array> pieces(static_cast<std::size_t>(p));
  pieces[r] = mine;
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  for (int s = 0; s < p - 1; ++s)
    pieces[wrap(r - s - 1, p)] =
        comm.sendrecv_staged(next, pieces[wrap(r - s, p)], prev, like[wrap(r - s - 1, p)])
            .on_device(output.allocation());
  return pieces;
}

double ring_all_gather_cost(const CostInputs& c) {
  return (c.p - 1) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
