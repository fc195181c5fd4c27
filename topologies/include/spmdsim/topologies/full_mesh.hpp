// A fully connected mesh: a direct cable between every pair of devices (full duplex: one SimGrid link per
// ordered pair), every device also on its own PCIe-like link pair to the host CPU.
//
//                 host CPU                  host -> dev i : dev{i}.pcie.h2d
//        pcie /   /        \   \ pcie       dev i -> host : dev{i}.pcie.d2h
//           dev0 ------------ dev1
//            |  \            /  |           dev i -> dev j : dev{i}-dev{j}   (one hop, always)
//            |    \        /    |
//            |      \    /      |           p = 4: 6 cables, 12 SimGrid links
//            |      /    \      |
//            |    /        \    |
//           dev3 ------------ dev2
//
// Cost: p(p-1) SimGrid links for the mesh (plus 2p PCIe links), so O(p^2) memory where the other
// builders are O(p): 1,047,552 links at the limit of 1024 devices. Routes themselves are computed, not
// stored. Above 1024 devices the builder refuses; use a switch, fat tree or dragonfly instead.
#pragma once

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

inline constexpr int kMaxFullMeshDevices = 1024;

struct FullMeshSpec {
  int num_devices = 8;
  DeviceSpec device;
  LinkSpec device_link;  // one pair's cable, per direction
  LinkSpec host_link;    // PCIe-like, per device
  FlopsPerSecond host_speed = 1e11;
};

// Throws ValueError naming the first bad field: fewer than 2 or more than kMaxFullMeshDevices devices, a
// bad link or device spec.
PlatformBuilder full_mesh(FullMeshSpec spec);

}  // namespace spmdsim::topologies
