// The all-reduce of a torus that drives every link of a device at once (torus_parts.cpp): part c runs
// multidim's ring reduce-scatters from its first dimension round the others, then its all-gathers back.
//
// Cost on a torus of equal sides d_i, parts of m = n / 2k: each part takes multidim's ring cost on its part,
// 2 sum_i (d_i - 1) alpha + 2 ((p-1)/p) m beta + ((p-1)/p) m gamma, and the parts overlap, so the bandwidth
// term is the ring's over 2k; a group without dimensions (flat {p}) runs two rings, one each way. The
// registry row prices the ring (where the ports are shared, a switch, the parts share them and the ring's
// cost holds).
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array torus_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1 || flat.size() == 0) return flat;
  const int parts = torus_part_count(comm, flat.size());
  const std::vector<Array> pieces = split_flat(flat, parts);
  std::vector<Array> reduced(pieces.size());
  on_torus_parts(comm, parts, [&](Communicator& lane, int c, const DimensionPlan& plan) {
    reduced[static_cast<std::size_t>(c)] =
        all_reduce_along_dimensions(lane, pieces[static_cast<std::size_t>(c)], op, plan);
  });
  return join_flat(reduced);
}

}  // namespace spmdsim::collectives
