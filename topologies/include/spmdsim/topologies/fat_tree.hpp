// A k-ary fat tree of two or three levels (a k-ary n-tree, Petrini & Vanneschi 1997): every switch has k
// ports down and k up, so every level carries the full bandwidth of the devices (full bisection). Every
// device also has its own PCIe-like link pair to the host CPU (as in switch_cluster.hpp, not drawn).
//
// Two levels, k = 4 (up to k^2 = 16 devices):
//
//          spine0       spine1       spine2       spine3       k spines, each cabled to every leaf
//           |||| \_____ ||||  ...                              leaf{L}-spine{s}.up / .down
//          leaf0        leaf1        leaf2        leaf3        ceil(p/k) leaves
//         / |  | \     / |  | \                                dev{i}.fabric.up / .down
//      dev0 dev1 dev2 dev3  dev4 ... dev7   ...                devices dev{k*L} .. dev{k*L+k-1} on leaf L
//
// Three levels, k = 4 (up to k^3 = 64 devices): k^2 leaves in k pods of k leaves; pod P has k aggregation
// switches agg{P*k+a}, each cabled to every leaf of its pod (leaf{L}-agg{A}.up/.down); k^2 core switches
// core{a*k+c}, core{a*k+c} cabled to switch a of every pod (agg{A}-core{C}.up/.down).
//
// Routing: up/down, going up only as far as the lowest common ancestor, then down (the down path is
// unique). The up ports are chosen by destination (D-mod-k, deterministic, as InfiniBand subnet managers
// do): at the leaf, up port dst mod k; at an aggregation switch, up port (dst / k) mod k. So all traffic to
// one device descends through one spine, and a down link from a spine carries traffic for one device only.
// Two levels, k = 4, dev1 -> dev6 (spine 6 mod 4 = 2):
//
//     dev1 --dev1.fabric.up--> leaf0 --leaf0-spine2.up--> spine2 --leaf1-spine2.down--> leaf1
//          --dev6.fabric.down--> dev6
//
// Hops: 2 under one leaf, 4 across leaves (two levels) or within a pod (three levels), 6 across pods.
// Only populated switches get links: 2p device links, 2k per populated leaf, and with three levels 2k per
// aggregation switch of a populated pod; plus 2p PCIe links: O(p). Platform::dimensions is left flat.
#pragma once

#include <string>
#include <vector>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/link_spec.hpp"

namespace spmdsim::topologies {

struct FatTreeSpec {
  int num_devices = 16;  // 2 .. k^levels, filling leaves in order
  int levels = 2;        // 2 (leaves, spines) or 3 (leaves, aggregation, core)
  int k = 4;             // ports down (and up) per switch
  DeviceSpec device;
  LinkSpec device_link;  // device <-> leaf, per direction
  LinkSpec switch_link;  // between switch levels, per direction
  LinkSpec host_link;    // PCIe-like, per device
  FlopsPerSecond host_speed = 1e11;
};

// A switch: level 0 leaf, 1 spine (two levels) or aggregation (three levels), 2 core; index within level.
struct FatTreeSwitch {
  int level = 0;
  int index = 0;
  bool operator==(const FatTreeSwitch&) const = default;
};

// "leaf3", "spine1", "agg5", "core2".
std::string fat_tree_switch_name(int levels, FatTreeSwitch node);

// The switches a message from device `from` to device `to` passes, in order (up, then down; empty when
// from == to). Pure.
std::vector<FatTreeSwitch> fat_tree_switches(int levels, int k, int from, int to);

// Throws ValueError naming the first bad field: levels other than 2 or 3, k below 2, num_devices outside
// 2 .. k^levels, a bad link or device spec.
PlatformBuilder fat_tree(FatTreeSpec spec);

}  // namespace spmdsim::topologies
