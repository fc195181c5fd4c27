// The all-reduce of a torus that drives every link of a device at once, as JAX's all-reduce on a TPU slice
// does (REFERENCES.md §3.4, scaling-book sharding.md: bidirectional rings, and "gathering over k mesh axes
// multiplies the available bandwidth by k"). The vector is cut into 2k parts, k the group's dimensions;
// part (d, s) runs multidim's ring reduce-scatters starting with dimension d and going round the others in
// order, then its all-gathers back, its rings turning in direction s. All parts run at once, each on a
// channel of its own (Communicator::in_parallel): at every phase the 2k parts are on the 2k (dimension,
// direction) pairs, so on a torus of equal sides no two share a link.
//
//   torus {4, 4}: 4 parts        phase 1           phase 2
//     part (0, +)                 x+ rings          y+ rings
//     part (0, -)                 x- rings          y- rings
//     part (1, +)                 y+ rings          x+ rings
//     part (1, -)                 y- rings          x- rings
//
// Cost on a torus of equal sides d_i, parts of m = n / 2k: each part takes multidim's ring cost on its part,
// 2 sum_i (d_i - 1) alpha + 2 ((p-1)/p) m beta + ((p-1)/p) m gamma, and the parts overlap, so the bandwidth
// term is the ring's over 2k; a group without dimensions (flat {p}) runs two rings, one each way. The
// registry row prices the ring (where the ports are shared, a switch, the parts share them and the ring's
// cost holds).
#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array torus_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1 || flat.size() == 0) return flat;
  const int k = static_cast<int>(comm.dimensions().size());
  const int parts = static_cast<int>(std::min<std::int64_t>(2 * k, flat.size()));
  const std::vector<Array> pieces = split_flat(flat, parts);
  // Every part walks the group in its own order (DimensionPlan), so each channel's ring is the group itself.
  std::vector<int> identity(static_cast<std::size_t>(comm.size()));
  std::iota(identity.begin(), identity.end(), 0);
  const auto channels = std::make_shared<const ChannelRings>(static_cast<std::size_t>(parts), identity);
  std::vector<Array> reduced(pieces.size());
  comm.in_parallel(channels, ChannelProtocol{}, [&](Communicator& lane, int c) {
    DimensionPlan plan{.names = std::vector<std::string>(static_cast<std::size_t>(k), "ring"),
                       .reversed = c % 2 == 1};
    for (int i = 0; i < k; ++i) plan.order.push_back((c / 2 + i) % k);
    reduced[static_cast<std::size_t>(c)] =
        all_reduce_along_dimensions(lane, pieces[static_cast<std::size_t>(c)], op, plan);
  });
  return join_flat(reduced);
}

}  // namespace spmdsim::collectives
