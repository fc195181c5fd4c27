// A bidirectional ring: device i is cabled to device i+1 (mod p), every cable full duplex, and every device
// also on its own PCIe-like link pair to the host CPU (as in switch_cluster.hpp).
//
//                         host CPU                       host -> dev i : dev{i}.pcie.h2d
//                 pcie /   |    |    \ pcie              dev i -> host : dev{i}.pcie.d2h
//       +------> dev0 == dev1 == dev2 == ... == dev{p-1} ------+
//       |                                                      |   dev i -> dev i+1 : dev{i}.next
//       +-------------------- wraparound ----------------------+   dev i -> dev i-1 : dev{i}.prev
//
// A message goes the shorter way round, one link per hop; a tie (p even, destination opposite) goes
// forward. p = 8, dev1 -> dev6 goes backward in 3 hops:
//
//       dev1 --dev1.prev--> dev0 --dev0.prev--> dev7 --dev7.prev--> dev6
//
// At most floor(p/2) hops. A ring of 2 has one cable: dev0.next (0 -> 1) and dev1.next (1 -> 0), no .prev.
// Links: 2p SimGrid links for the ring (2 for p = 2) plus 2p PCIe links.
#pragma once

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

struct RingSpec {
  int num_devices = 8;
  DeviceSpec device;
  LinkSpec device_link;  // one neighbour cable, per direction
  LinkSpec host_link;    // PCIe-like, per device
  FlopsPerSecond host_speed = 1e11;
};

// The shorter way round a ring of `size` positions from `from` to `to`: direction +1 (towards from+1) or
// -1, and the number of hops (0 when from == to). Ties go +1. Pure; the torus uses it per dimension.
struct RingPath {
  int direction = +1;
  int hops = 0;
};
RingPath ring_path(int size, int from, int to);

// Throws ValueError naming the first bad field: fewer than 2 devices, a link whose bandwidth is not positive
// and finite or whose latency is negative, a bad device spec.
PlatformBuilder ring(RingSpec spec);

}  // namespace spmdsim::topologies
