// A dragonfly (Kim, Dally, Scott & Abts 2008): groups of routers, the routers of a group all-to-all
// connected by local cables, one global cable between every pair of groups, devices on routers. Every
// cable is full duplex; every device also has its own PCIe-like link pair to the host CPU (as in
// switch_cluster.hpp, not drawn).
//
//   3 groups of 2 routers, 2 devices per router (12 devices):
//
//            group0                    group1                    group2
//       r0 ========== r1          r0 ========== r1          r0 ========== r1      local cables: all-to-all
//      /  \          /  \        /  \          /  \        /  \          /  \     within a group
//   dev0 dev1     dev2 dev3    dev4 dev5     dev6 dev7    dev8 dev9    dev10 dev11
//
//   global cables, one per pair of groups:  group0.r0 -- group1.r1
//                                           group1.r0 -- group2.r1
//                                           group2.r0 -- group0.r1
//
// Names: router r of group g is group{g}.r{r}; device i is on router i / devices_per_router (global router
// index g * routers_per_group + r). Links: dev{i}.fabric.up / .down (device <-> router), group{g}.r{a}-r{b}
// (local, a -> b), group{g}-group{h} (global, g -> h).
//
// Which router holds the global cable to group h: in group g, the cable to the group at offset
// o = (h - g) mod G (1 .. G-1) is on router (o - 1) mod routers_per_group, so the G-1 global cables of a
// group are dealt round-robin to its routers (dragonfly_gateway).
//
// Routing: minimal. Same router: up, down. Same group: up, one local hop, down. Other group: up, a local
// hop to the gateway router if the source router is not it, the global cable, a local hop from the
// arrival router if it is not the destination's, down: at most 5 links. Above, dev2 -> dev4:
//
//   dev2 --dev2.fabric.up--> group0.r1 --group0.r1-r0--> group0.r0 --group0-group1--> group1.r1
//        --group1.r1-r0--> group1.r0 --dev4.fabric.down--> dev4
//
// Links: 2p device links, G*a*(a-1) local and G*(G-1) global SimGrid links, plus 2p PCIe links (G groups,
// a routers per group): O(p) for the balanced dragonfly (G ~ a*h+1), O(G^2) in general.
// Platform::dimensions = {devices per group, num_groups}.
#pragma once

#include <vector>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

struct DragonflySpec {
  int num_groups = 4;
  int routers_per_group = 4;
  int devices_per_router = 2;
  DeviceSpec device;
  LinkSpec device_link;  // device <-> router, per direction
  LinkSpec local_link;   // router <-> router in a group, per direction
  LinkSpec global_link;  // group <-> group, per direction
  LinkSpec host_link;    // PCIe-like, per device
  FlopsPerSecond host_speed = 1e11;
};

// The router (index within `group`) that holds the global cable from `group` to `other_group`. Pure.
int dragonfly_gateway(int num_groups, int routers_per_group, int group, int other_group);

// The routers (global indices g * routers_per_group + r) a message from device `from` to device `to`
// passes under minimal routing, in order (empty when from == to). Pure.
std::vector<int> dragonfly_routers(const DragonflySpec& spec, int from, int to);

// Throws ValueError naming the first bad field: fewer than 2 groups, fewer than 1 router per group or
// device per router, a bad link or device spec.
PlatformBuilder dragonfly(DragonflySpec spec);

}  // namespace spmdsim::topologies
