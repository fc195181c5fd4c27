// MPICH's way of running a power-of-two algorithm on any number of ranks (allreduce_intra_recursive_doubling,
// allreduce_intra_reduce_scatter_allgather): with p' = 2^floor(lg p) and rem = p - p', the first 2 rem ranks
// fold pairwise (even rank -> odd rank, which reduces), p' ranks run the power-of-two core, and each odd
// rank sends the result back to its even partner.
//
//   p = 6, p' = 4, rem = 2:   fold      0 -> 1   2 -> 3           (4 and 5 wait for nothing)
//                             core      core ranks 0 1 2 3 = ranks 1 3 4 5
//                             unfold    1 -> 0   3 -> 2
//
// Cost of the fold and the unfold together: 2 alpha + 2 n beta + n gamma when p is not a power of two,
// nothing otherwise.
#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

int PowerOfTwoFold::rank_of(int core) const {
  return core < rem ? 2 * core + 1 : core + rem;
}

PowerOfTwoFold fold_to_power_of_two(Communicator& comm, Array& data, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  PowerOfTwoFold fold;
  fold.pof2 = 1;
  while (fold.pof2 * 2 <= p) fold.pof2 *= 2;
  fold.rem = p - fold.pof2;
  if (r >= 2 * fold.rem) {
    fold.core_rank = r - fold.rem;
  } else if (r % 2 == 0) {
    comm.send(r + 1, data);
    fold.core_rank = -1;
  } else {
    data = comm.combine(comm.recv(r - 1), data, op);
    fold.core_rank = r / 2;
  }
  return fold;
}

void unfold_from_power_of_two(Communicator& comm, const PowerOfTwoFold& fold, Array& data) {
  const int r = comm.rank();
  if (r >= 2 * fold.rem) return;
  if (r % 2 == 0)
    data = comm.recv(r + 1);
  else
    comm.send(r - 1, data);
}

int floor_log2(int p) {
  int lg = 0;
  while ((2 << lg) <= p) ++lg;
  return lg;
}

int ceil_log2(int p) {
  int lg = 0;
  while ((1 << lg) < p) ++lg;
  return lg;
}

}  // namespace spmdsim::collectives
