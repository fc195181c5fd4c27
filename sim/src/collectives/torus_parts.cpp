// How the torus algorithms (torus_all_reduce.cpp, torus_all_gather.cpp, torus_reduce_scatter.cpp) drive
// every link of a torus at once, as JAX's collectives on a TPU slice do (REFERENCES.md §3.4: bidirectional
// rings, and "gathering over k mesh axes multiplies the available bandwidth by k"): the message is cut into
// 2k parts, k the group's dimensions, and part c walks the dimensions from c / 2 round the others, its rings
// turning way c % 2. All parts run at once, each on a channel of its own (Communicator::in_parallel); at every
// phase the 2k parts are on the 2k (dimension, way) pairs, so on a torus of equal sides no two share a link.
//
//   torus {4, 4}: 4 parts        phase 1           phase 2
//     part 0 (dimension 0, +)     x+ rings          y+ rings
//     part 1 (dimension 0, -)     x- rings          y- rings
//     part 2 (dimension 1, +)     y+ rings          x+ rings
//     part 3 (dimension 1, -)     y- rings          x- rings
//
// A group without dimensions ({p}) has two parts: two rings, one each way. Along the lines of a mesh
// (Communicator::dimensions_are_mesh_lines) a ring closes over the other way's links, so a second way would
// only share them: there the parts are k, part c walking the dimensions from c, every ring one way.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {

namespace {

int ways(const Communicator& comm) { return comm.dimensions_are_mesh_lines() ? 1 : 2; }

}  // namespace

int torus_part_count(const Communicator& comm, std::int64_t elements) {
  return static_cast<int>(
      std::min<std::int64_t>(ways(comm) * static_cast<std::int64_t>(comm.dimensions().size()), elements));
}

std::int64_t digit_position(const std::vector<int>& dimensions, const std::vector<int>& digits, int rank) {
  std::int64_t position = 0;
  for (int d : digits) position = position * dimensions[static_cast<std::size_t>(d)] + coordinate(dimensions, rank, d);
  return position;
}

void on_torus_parts(Communicator& comm, int parts,
                    const std::function<void(Communicator& lane, int part, const DimensionPlan& plan)>& body) {
  const int k = static_cast<int>(comm.dimensions().size());
  const int way_count = ways(comm);
  // Every part walks the group in its own order (DimensionPlan), so each channel's ring is the group itself.
  std::vector<int> identity(static_cast<std::size_t>(comm.size()));
  std::iota(identity.begin(), identity.end(), 0);
  const auto channels = std::make_shared<const ChannelRings>(static_cast<std::size_t>(parts), identity);
  comm.in_parallel(channels, ChannelProtocol{}, [&](Communicator& lane, int c) {
    DimensionPlan plan{.names = std::vector<std::string>(static_cast<std::size_t>(k), "ring"),
                       .reversed = c % way_count == 1};
    for (int i = 0; i < k; ++i) plan.order.push_back((c / way_count + i) % k);
    body(lane, c, plan);
  });
}

}  // namespace spmdsim::collectives
