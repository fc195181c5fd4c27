// The first cluster: N identical devices behind one switch, each also on its own PCIe-like link to the
// host CPU. Every link is full duplex (one SimGrid link per direction).
//
//                 host CPU
//        pcie0  /   |    \  pcie{N-1}          host -> dev i : pcie{i}.h2d
//             dev0 dev1 ... dev{N-1}           dev i -> host : pcie{i}.d2h
//        fabric0 \  |    / fabric{N-1}         dev i -> dev j: fabric{i}.up, fabric{j}.down
//                 switch
//
// A device-to-device message crosses two fabric links: alpha = 2 x fabric latency, beta = 1 / fabric
// bandwidth, as the alpha-beta formulas assume of a non-blocking switch.
#pragma once

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

struct SwitchClusterSpec {
  int num_devices = 8;
  DeviceSpec device;
  LinkSpec host_link;    // PCIe-like, per device
  LinkSpec device_link;  // device <-> switch
  FlopsPerSecond host_speed = 1e11;
};

// An A100-SXM4-80GB-class device and its links; sources in ../shared/REFERENCES.md §1.1 and §1.4.
DeviceSpec a100_like_device();
SwitchClusterSpec default_switch_cluster(int num_devices);

// Throws ValueError naming the first bad field (fewer than one device, a bandwidth that is not positive,
// a negative latency).
PlatformBuilder switch_cluster(SwitchClusterSpec spec);

}  // namespace spmdsim::topologies
