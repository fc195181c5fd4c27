// Ring all-reduce as NCCL's runRing runs it (src/device/all_reduce.h): p-1 reduce-scatter steps, each rank
// passing on the partial sum it has just formed, then p-1 all-gather steps, each rank passing on the reduced
// block it has just received. What a rank keeps goes into the call's output buffer, held from the start;
// the blocks in flight stay in the channel's staging buffers (Communicator::sendrecv_staged), so a rank
// holds its output and the block it is passing on, not p pieces.
//
//   reduce-scatter, step s: r sends its partial of block r-s-1 to r+1, receives the partial of block r-s-2
//                           from r-1 and adds its own part; after p-1 steps it holds block r reduced
//   all-gather, step s:     r sends reduced block r-s to r+1 and receives reduced block r-s-1 from r-1
//
//   r0 -> r1 -> r2 -> r3 -> r0     every rank sends at once, one block per step
//
// Cost (Thakur, Rabenseifner & Gropp 2005, §5.3): 2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const int p = comm.size();
  if (p == 1) return flat;
  const int r = comm.rank();
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  const Array output = comm.hold_scratch(flat);  // released on return, when the caller takes the result
  const FlatBlocks blocks{flat, p};

  Array passing = blocks.view(r - 1);
  for (int s = 0; s < p - 1; ++s) {
    // Every rank split alike: what arrives is shaped like this rank's own part of that block.
    const Array mine = blocks.view(r - s - 2);
    passing = comm.combine_staged(mine, comm.sendrecv_staged(next, passing, prev, mine), op);
  }

  FlatOutput gathered(flat);
  gathered.write(blocks.offset(r), passing);
  for (int s = 0; s < p - 1; ++s) {
    const int incoming = r - s - 1;
    passing = comm.sendrecv_staged(next, passing, prev, blocks.shape_of(incoming));
    gathered.write(blocks.offset(incoming), passing);
  }
  return std::move(gathered).result();
}

double ring_all_reduce_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return 2 * (c.p - 1) * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
