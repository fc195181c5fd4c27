// A 2D or 3D torus (TPU-style): devices on a grid of `shape`, each cabled to its two neighbours in every
// dimension with wraparound, every cable full duplex; every device also on its own PCIe-like link pair to
// the host CPU (as in switch_cluster.hpp, not drawn). Device index = x + X*(y + Y*z): dimension 0 varies
// fastest, as in Platform::dimensions, which the builder sets to `shape`.
//
//   4x4 (16 devices):     :       :       :       :        (columns wrap: dev12.y+ -> dev0)
//                    ..-- dev12 - dev13 - dev14 - dev15 --..   (rows wrap: dev15.x+ -> dev12)
//                           |       |       |       |
//                    ..-- dev8 -- dev9 -- dev10 - dev11 --..
//                           |       |       |       |
//                    ..-- dev4 -- dev5 -- dev6 -- dev7 ---..
//                           |       |       |       |          y (dim 1)
//                    ..-- dev0 -- dev1 -- dev2 -- dev3 ---..   ^
//                           :       :       :       :          +--> x (dim 0)
//
//   links: dev{i}.x+ carries dev i -> its +x neighbour, dev{i}.x- -> its -x neighbour; likewise y, z.
//
// Routing: dimension order (x, then y, then z); in each dimension the shorter way round, ties going +.
// 4x4, dev1 -> dev14 (x 1 -> 2, y 0 -> 3):
//
//       dev1 --dev1.x+--> dev2 --dev2.y- (wraparound)--> dev14
//
// A route has at most sum(floor(size/2)) hops: 4 on 4x4, 6 on 4x4x4 (dev0 -> dev42 = (2,2,2)); the
// opposite corner (3,3,3) is only 3 hops away through the wraparound links.
// A dimension of size 2 has one cable per pair of neighbours (only .+ links: dev.+ of coordinate 1 wraps
// to 0); a dimension of size 1 has no links. Links: 2 per device per dimension of size >= 3, 1 per
// device per dimension of size 2, plus 2 PCIe links per device: O(p).
//
// With wraparound = false the grid is a mesh (small TPU slices): no wraparound cables, each dimension
// walked straight towards the destination; a route has at most sum(size - 1) hops.
#pragma once

#include <vector>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

struct TorusSpec {
  int num_devices = 16;
  std::vector<int> shape = {4, 4};  // 2 or 3 dimensions, dimension 0 fastest; multiplies to num_devices
  bool wraparound = true;           // false: a mesh, no cables from the last position back to the first
  DeviceSpec device;
  LinkSpec device_link;  // one neighbour cable, per direction
  LinkSpec host_link;    // PCIe-like, per device
  FlopsPerSecond host_speed = 1e11;
};

// The coordinates of device `index` in `shape` (dimension 0 fastest) and back.
std::vector<int> torus_coordinates(const std::vector<int>& shape, int index);
int torus_index(const std::vector<int>& shape, const std::vector<int>& coordinates);

// One hop of a torus route: leaves `device` along `dimension` in `direction` (+1 or -1).
struct TorusHop {
  int device = 0;
  int dimension = 0;
  int direction = +1;
  bool operator==(const TorusHop&) const = default;
};

// Dimension-order route from device `from` to device `to`: dimension 0 first, in each dimension the shorter
// way round (ring_path), ties going +1; without wraparound, straight towards the destination. Pure.
std::vector<TorusHop> torus_route(const std::vector<int>& shape, int from, int to, bool wraparound = true);

// Throws ValueError naming the first bad field: a shape of other than 2 or 3 dimensions, an entry below 1,
// a shape that does not multiply to num_devices, fewer than 2 devices, a bad link or device spec.
PlatformBuilder torus(TorusSpec spec);

}  // namespace spmdsim::topologies
