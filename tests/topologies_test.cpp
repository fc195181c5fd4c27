// Platform builders: their pure route functions; the hosts, links and routes (exact link names) of what they
// build; a psum and an all_gather with the right values on every one of them; closed-form times (ring
// all-reduce on a ring, host transfers sharing a node's host memory); and every bad-input message.
// A test that builds a platform has its own Simulation: gtest_discover_tests runs each in its own process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/dragonfly.hpp"
#include "spmdsim/topologies/fat_tree.hpp"
#include "spmdsim/topologies/full_mesh.hpp"
#include "spmdsim/topologies/ring.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "spmdsim/topologies/torus.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using namespace topologies;
using Names = std::vector<std::string>;

// Round figures: device links 100 GB/s and 1 us, host (PCIe) links 10 GB/s and 1 us; free compute.
constexpr LinkSpec kDeviceLink{100e9, 1e-6};
constexpr LinkSpec kHostLink{10e9, 1e-6};
constexpr LinkSpec kSwitchLink{50e9, 2e-6};

DeviceSpec free_device() { return testing::free_compute_cluster(1).device; }

// ---------------------------------------------------------------------------------------------------------
// Specs

RingSpec ring_spec(int p) { return {p, free_device(), kDeviceLink, kHostLink}; }
FullMeshSpec mesh_spec(int p) { return {p, free_device(), kDeviceLink, kHostLink}; }
TorusSpec torus_spec(std::vector<int> shape, bool wraparound = true) {
  int p = 1;
  for (int s : shape) p *= s;
  return {p, std::move(shape), wraparound, free_device(), kDeviceLink, kHostLink};
}
FatTreeSpec fat_tree_spec(int p, int levels, int k) {
  return {p, levels, k, free_device(), kDeviceLink, kSwitchLink, kHostLink};
}
DragonflySpec dragonfly_spec(int groups, int routers, int devices) {
  return {groups, routers, devices, free_device(), kDeviceLink, {80e9, 1e-6}, {25e9, 3e-6}, kHostLink};
}
NodeSpec node_spec(NodeFabric fabric = NodeFabric::nvswitch, int devices = 8, double host_memory = 40e9) {
  NodeSpec node;
  node.name = "box";
  node.devices_per_node = devices;
  node.device = free_device();
  node.fabric = fabric;
  node.device_link = kDeviceLink;
  node.host_link = kHostLink;
  node.host_memory_bandwidth = host_memory;
  node.nic = {25e9, 1e-6};
  return node;
}
MultiNodeSpec multi_spec(int nodes, int devices, ScaleOutNetwork network,
                         RailCrossing crossing = RailCrossing::nvlink_first, int nodes_per_leaf = 2) {
  MultiNodeSpec spec;
  spec.node = node_spec(NodeFabric::nvswitch, devices);
  spec.num_nodes = nodes;
  spec.network = network;
  spec.switch_link = kSwitchLink;
  spec.nodes_per_leaf = nodes_per_leaf;
  spec.rail_crossing = crossing;
  return spec;
}

// ---------------------------------------------------------------------------------------------------------
// Reading a built platform (the Simulation sealed it)

std::size_t host_count() { return simgrid::s4u::Engine::get_instance()->get_host_count(); }
// The builder's links: SimGrid adds its own "__loopback__".
std::size_t link_count() {
  const auto links = simgrid::s4u::Engine::get_instance()->get_all_links();
  return static_cast<std::size_t>(std::count_if(links.begin(), links.end(), [](const simgrid::s4u::Link* link) {
    return link->get_name().rfind("__", 0) != 0;
  }));
}

simgrid::s4u::Host* host(const std::string& name) { return simgrid::s4u::Host::by_name(name); }

Names route(const std::string& from, const std::string& to) {
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  host(from)->route_to(host(to), links, &latency);
  Names names;
  for (auto* link : links) names.push_back(link->get_name());
  return names;
}

Names route(const Simulation& sim, int from, int to) {
  const auto& devices = sim.platform().devices;
  return route(devices[static_cast<std::size_t>(from)].name, devices[static_cast<std::size_t>(to)].name);
}

// The longest device-to-device route, in links.
std::size_t longest_route(const Simulation& sim) {
  std::size_t longest = 0;
  for (int a = 0; a < sim.num_devices(); ++a)
    for (int b = 0; b < sim.num_devices(); ++b) longest = std::max(longest, route(sim, a, b).size());
  return longest;
}

// The ValueError message a builder raises for a spec ("" if none).
template <class Spec>
std::string error_of(PlatformBuilder (*builder)(Spec), Spec spec) {
  try {
    builder(std::move(spec));
  } catch (const ValueError& error) {
    return error.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------------------
// Pure route functions

TEST(TopologyPureRoutes, RingPathGoesTheShorterWayRoundAndForwardOnTies) {
  EXPECT_EQ(ring_path(8, 1, 3).direction, +1);
  EXPECT_EQ(ring_path(8, 1, 3).hops, 2);
  EXPECT_EQ(ring_path(8, 1, 6).direction, -1);
  EXPECT_EQ(ring_path(8, 1, 6).hops, 3);
  EXPECT_EQ(ring_path(8, 2, 6).direction, +1);  // tie
  EXPECT_EQ(ring_path(8, 2, 6).hops, 4);
  EXPECT_EQ(ring_path(8, 5, 5).hops, 0);
  EXPECT_EQ(ring_path(2, 1, 0).direction, +1);  // the tie of a ring of 2: 1 -> 0 forward
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) EXPECT_LE(ring_path(8, a, b).hops, 4);
}

TEST(TopologyPureRoutes, TorusDimensionOrderShortestDirectionWithWraparound) {
  const std::vector<int> cube{4, 4, 4};
  EXPECT_EQ(torus_coordinates(cube, 42), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(torus_index(cube, {3, 1, 2}), 3 + 4 * (1 + 4 * 2));
  // dev0 -> (2,2,2): two hops in x, then y, then z.
  EXPECT_EQ(torus_route(cube, 0, 42), (std::vector<TorusHop>{
                                           {0, 0, +1}, {1, 0, +1}, {2, 1, +1}, {6, 1, +1}, {10, 2, +1}, {26, 2, +1}}));
  // The opposite corner (3,3,3) is one wraparound hop per dimension.
  EXPECT_EQ(torus_route(cube, 0, 63), (std::vector<TorusHop>{{0, 0, -1}, {3, 1, -1}, {15, 2, -1}}));
  std::size_t longest = 0;
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) longest = std::max(longest, torus_route(cube, a, b).size());
  EXPECT_EQ(longest, 6u);
}

TEST(TopologyPureRoutes, TorusWithoutWraparoundWalksStraight) {
  const std::vector<int> square{4, 4};
  EXPECT_EQ(torus_route(square, 15, 0, /*wraparound=*/false).size(), 6u);
  EXPECT_EQ(torus_route(square, 3, 0, false), (std::vector<TorusHop>{{3, 0, -1}, {2, 0, -1}, {1, 0, -1}}));
  EXPECT_EQ(torus_route(square, 3, 0, true), (std::vector<TorusHop>{{3, 0, +1}}));
}

TEST(TopologyPureRoutes, FatTreeUpToTheCommonAncestorWithTheSpineChosenByDestination) {
  using S = FatTreeSwitch;
  EXPECT_EQ(fat_tree_switches(2, 4, 1, 2), (std::vector<S>{{0, 0}}));
  EXPECT_EQ(fat_tree_switches(2, 4, 1, 6), (std::vector<S>{{0, 0}, {1, 2}, {0, 1}}));
  EXPECT_EQ(fat_tree_switches(2, 4, 1, 1), (std::vector<S>{}));
  // D-mod-k: every source reaches a destination through the same spine.
  for (int to = 0; to < 16; ++to)
    for (int from = 0; from < 16; ++from)
      if (from / 4 != to / 4) {
        EXPECT_EQ(fat_tree_switches(2, 4, from, to)[1], (S{1, to % 4}));
      }
  // Three levels, k = 4: within a pod, then across pods (dst 45: leaf 11, pod 2, up ports 1 and 3).
  EXPECT_EQ(fat_tree_switches(3, 4, 0, 6), (std::vector<S>{{0, 0}, {1, 2}, {0, 1}}));
  EXPECT_EQ(fat_tree_switches(3, 4, 0, 45), (std::vector<S>{{0, 0}, {1, 1}, {2, 7}, {1, 9}, {0, 11}}));
  EXPECT_EQ(fat_tree_switch_name(3, {2, 7}), "core7");
  EXPECT_EQ(fat_tree_switch_name(2, {1, 3}), "spine3");
}

TEST(TopologyPureRoutes, DragonflyGlobalCablesAreDealtRoundRobinAndRoutesAreMinimal) {
  // 5 groups, 2 routers: each group's 4 global cables, 2 per router.
  for (int g = 0; g < 5; ++g) {
    std::vector<int> per_router(2, 0);
    for (int h = 0; h < 5; ++h)
      if (h != g) ++per_router[static_cast<std::size_t>(dragonfly_gateway(5, 2, g, h))];
    EXPECT_EQ(per_router, (std::vector<int>{2, 2}));
  }
  EXPECT_EQ(dragonfly_gateway(3, 2, 0, 1), 0);
  EXPECT_EQ(dragonfly_gateway(3, 2, 1, 0), 1);
  const auto spec = dragonfly_spec(3, 2, 2);
  EXPECT_EQ(dragonfly_routers(spec, 0, 1), (std::vector<int>{0}));
  EXPECT_EQ(dragonfly_routers(spec, 0, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(dragonfly_routers(spec, 2, 4), (std::vector<int>{1, 0, 3, 2}));  // local, global, local
  EXPECT_EQ(dragonfly_routers(spec, 0, 6), (std::vector<int>{0, 3}));        // global only
}

TEST(TopologyPureRoutes, NodeHostTransfersCrossTheSharedHostMemory) {
  const auto node = node_spec();
  EXPECT_EQ(accelerator_node_route(node, -1, 3), (Names{"hostmem", "dev3.pcie.h2d"}));
  EXPECT_EQ(accelerator_node_route(node, 3, -1), (Names{"dev3.pcie.d2h", "hostmem"}));
  EXPECT_EQ(accelerator_node_route(node, 1, 5), (Names{"dev1.fabric.up", "dev5.fabric.down"}));
  EXPECT_EQ(accelerator_node_route(node_spec(NodeFabric::full_mesh), 1, 5), (Names{"dev1-dev5"}));
  EXPECT_EQ(accelerator_node_route(node_spec(NodeFabric::nvswitch, 8, 0), -1, 3), (Names{"dev3.pcie.h2d"}));
}

TEST(TopologyPureRoutes, MultiNodeRailsFatTreeAndTheCpusOfOtherNodes) {
  const auto pxn = multi_spec(2, 8, ScaleOutNetwork::rail_optimized);
  EXPECT_EQ(multi_node_route(pxn, 3, 11), (Names{"node0.dev3.nic.up", "node1.dev3.nic.down"}));
  EXPECT_EQ(multi_node_route(pxn, 3, 13), (Names{"node0.dev3.fabric.up", "node0.dev5.fabric.down",
                                                 "node0.dev5.nic.up", "node1.dev5.nic.down"}));
  EXPECT_EQ(multi_node_route(pxn, 9, 12), (Names{"node1.dev1.fabric.up", "node1.dev4.fabric.down"}));
  EXPECT_EQ(multi_node_route(pxn, -2, 9), (Names{"node1.hostmem", "node1.dev1.pcie.h2d"}));
  // Another node's CPU: through this node's device on the destination's rail.
  EXPECT_EQ(multi_node_route(pxn, -1, 9),
            (Names{"node0.hostmem", "node0.dev1.pcie.h2d", "node0.dev1.nic.up", "node1.dev1.nic.down"}));
  const auto spine = multi_spec(2, 8, ScaleOutNetwork::rail_optimized, RailCrossing::spine);
  EXPECT_EQ(multi_node_route(spine, 3, 13),
            (Names{"node0.dev3.nic.up", "rail3-spine1.up", "rail5-spine1.down", "node1.dev5.nic.down"}));
  const auto tree = multi_spec(4, 2, ScaleOutNetwork::fat_tree, RailCrossing::nvlink_first, 2);
  EXPECT_EQ(multi_node_route(tree, 1, 3), (Names{"node0.dev1.nic.up", "node1.dev1.nic.down"}));
  EXPECT_EQ(multi_node_route(tree, 1, 7),
            (Names{"node0.dev1.nic.up", "leaf0-spine3.up", "leaf1-spine3.down", "node3.dev1.nic.down"}));
}

// ---------------------------------------------------------------------------------------------------------
// What the builders build

TEST(TopologyRing, HostsLinksAndShortestRoutes) {
  Simulation sim(ring(ring_spec(8)));
  EXPECT_EQ(host_count(), 9u);
  EXPECT_EQ(link_count(), 32u);  // 8 cables x 2 directions + 8 PCIe x 2
  EXPECT_EQ(route(sim, 1, 6), (Names{"dev1.prev", "dev0.prev", "dev7.prev"}));
  EXPECT_EQ(route(sim, 6, 1), (Names{"dev6.next", "dev7.next", "dev0.next"}));
  EXPECT_EQ(route(sim, 3, 4), (Names{"dev3.next"}));
  EXPECT_EQ(route("host", "dev3"), (Names{"dev3.pcie.h2d"}));
  EXPECT_EQ(route("dev3", "host"), (Names{"dev3.pcie.d2h"}));
  EXPECT_EQ(longest_route(sim), 4u);
  EXPECT_TRUE(sim.platform().dimensions.empty());
}

TEST(TopologyRing, TwoDevicesShareOneCable) {
  Simulation sim(ring(ring_spec(2)));
  EXPECT_EQ(host_count(), 3u);
  EXPECT_EQ(link_count(), 6u);
  EXPECT_EQ(route(sim, 0, 1), (Names{"dev0.next"}));
  EXPECT_EQ(route(sim, 1, 0), (Names{"dev1.next"}));
}

TEST(TopologyFullMesh, ALinkPerOrderedPair) {
  Simulation sim(full_mesh(mesh_spec(5)));
  EXPECT_EQ(host_count(), 6u);
  EXPECT_EQ(link_count(), 30u);  // 5 x 4 pair links + 10 PCIe
  EXPECT_EQ(route(sim, 2, 4), (Names{"dev2-dev4"}));
  EXPECT_EQ(route(sim, 4, 2), (Names{"dev4-dev2"}));
  EXPECT_EQ(longest_route(sim), 1u);
}

TEST(TopologyTorus, Tpu4x4x4Cube) {
  Simulation sim(torus(torus_spec({4, 4, 4})));
  EXPECT_EQ(host_count(), 65u);
  EXPECT_EQ(link_count(), 64u * 6 + 128);
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(route(sim, 0, 42), (Names{"dev0.x+", "dev1.x+", "dev2.y+", "dev6.y+", "dev10.z+", "dev26.z+"}));
  EXPECT_EQ(route(sim, 0, 63), (Names{"dev0.x-", "dev3.y-", "dev15.z-"}));  // opposite corner: wraparound
  EXPECT_EQ(route(sim, 63, 0), (Names{"dev63.x+", "dev60.y+", "dev48.z+"}));
  EXPECT_EQ(longest_route(sim), 6u);
}

TEST(TopologyTorus, TwoDimensionalWithADimensionOfTwo) {
  Simulation sim(torus(torus_spec({4, 2})));
  EXPECT_EQ(host_count(), 9u);
  EXPECT_EQ(link_count(), 8u * 2 + 8 * 1 + 16);  // x: + and -, y (size 2): + only, PCIe
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{4, 2}));
  EXPECT_EQ(route(sim, 1, 4), (Names{"dev1.x-", "dev0.y+"}));
  EXPECT_EQ(route(sim, 4, 1), (Names{"dev4.x+", "dev5.y+"}));
}

TEST(TopologyTorus, MeshWithoutWraparound) {
  Simulation sim(torus(torus_spec({4, 4}, /*wraparound=*/false)));
  EXPECT_EQ(link_count(), 2u * 2 * 4 * 3 + 32);  // 2 dimensions x 4 lines x 3 cables x 2 directions, PCIe
  EXPECT_EQ(route(sim, 3, 0), (Names{"dev3.x-", "dev2.x-", "dev1.x-"}));
  EXPECT_EQ(longest_route(sim), 6u);
  EXPECT_NE(sim.platform().description.find("mesh 4x4"), std::string::npos);
}

TEST(TopologyFatTree, TwoLevels) {
  Simulation sim(fat_tree(fat_tree_spec(16, 2, 4)));
  EXPECT_EQ(host_count(), 17u);
  EXPECT_EQ(link_count(), 32u + 32 + 4 * 4 * 2);  // device, PCIe, leaf-spine
  EXPECT_EQ(route(sim, 1, 6),
            (Names{"dev1.fabric.up", "leaf0-spine2.up", "leaf1-spine2.down", "dev6.fabric.down"}));
  EXPECT_EQ(route(sim, 1, 2), (Names{"dev1.fabric.up", "dev2.fabric.down"}));
  EXPECT_EQ(longest_route(sim), 4u);
}

TEST(TopologyFatTree, ThreeLevels) {
  Simulation sim(fat_tree(fat_tree_spec(8, 3, 2)));
  EXPECT_EQ(host_count(), 9u);
  // 16 device + 16 PCIe + leaf-agg (4 leaves x 2 x 2) + agg-core (4 aggs x 2 x 2).
  EXPECT_EQ(link_count(), 16u + 16 + 16 + 16);
  EXPECT_EQ(route(sim, 0, 7), (Names{"dev0.fabric.up", "leaf0-agg1.up", "agg1-core3.up", "agg3-core3.down",
                                     "leaf3-agg3.down", "dev7.fabric.down"}));
  EXPECT_EQ(route(sim, 0, 3),
            (Names{"dev0.fabric.up", "leaf0-agg1.up", "leaf1-agg1.down", "dev3.fabric.down"}));
  EXPECT_EQ(longest_route(sim), 6u);
}

TEST(TopologyFatTree, PartlyPopulatedTreeLinksOnlyItsLeaves) {
  Simulation sim(fat_tree(fat_tree_spec(6, 2, 4)));
  EXPECT_EQ(link_count(), 12u + 12 + 2 * 4 * 2);
}

TEST(TopologyDragonfly, GroupsRoutersAndGlobalCables) {
  Simulation sim(dragonfly(dragonfly_spec(3, 2, 2)));
  EXPECT_EQ(host_count(), 13u);
  EXPECT_EQ(link_count(), 24u + 24 + 3 * 2 * 1 + 3 * 2);  // device, PCIe, local, global
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{4, 3}));
  EXPECT_EQ(route(sim, 2, 4), (Names{"dev2.fabric.up", "group0.r1-r0", "group0-group1", "group1.r1-r0",
                                     "dev4.fabric.down"}));
  EXPECT_EQ(route(sim, 0, 2), (Names{"dev0.fabric.up", "group0.r0-r1", "dev2.fabric.down"}));
  EXPECT_EQ(longest_route(sim), 5u);
}

TEST(TopologyAcceleratorNode, NvSwitchNode) {
  Simulation sim(accelerator_node(node_spec()));
  EXPECT_EQ(host_count(), 9u);
  EXPECT_EQ(link_count(), 1u + 16 + 16 + 16);  // host memory, PCIe, switch ports, NICs
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{8}));
  EXPECT_EQ(route("host", "dev3"), (Names{"hostmem", "dev3.pcie.h2d"}));
  EXPECT_EQ(route("dev3", "host"), (Names{"dev3.pcie.d2h", "hostmem"}));
  EXPECT_EQ(route(sim, 1, 5), (Names{"dev1.fabric.up", "dev5.fabric.down"}));
}

TEST(TopologyAcceleratorNode, FullMeshNode) {
  Simulation sim(accelerator_node(node_spec(NodeFabric::full_mesh)));
  EXPECT_EQ(link_count(), 1u + 16 + 56 + 16);
  EXPECT_EQ(route(sim, 1, 5), (Names{"dev1-dev5"}));
  EXPECT_EQ(route(sim, 5, 1), (Names{"dev5-dev1"}));
}

TEST(TopologyAcceleratorNode, HostMemoryNotModelled) {
  Simulation sim(accelerator_node(node_spec(NodeFabric::nvswitch, 4, 0)));
  EXPECT_EQ(link_count(), 8u + 8 + 8);
  EXPECT_EQ(route("host", "dev2"), (Names{"dev2.pcie.h2d"}));
}

// Every pair of hosts (CPUs included) routes on the built platform as multi_node_route says.
void expect_routes_as_the_pure_function(const Simulation& sim, const MultiNodeSpec& spec) {
  std::vector<std::pair<int, std::string>> endpoints;
  for (int n = 0; n < spec.num_nodes; ++n) endpoints.emplace_back(-1 - n, fmt::format("node{}.host", n));
  for (int d = 0; d < sim.num_devices(); ++d)
    endpoints.emplace_back(d, sim.platform().devices[static_cast<std::size_t>(d)].name);
  for (const auto& [a, a_name] : endpoints)
    for (const auto& [b, b_name] : endpoints)
      EXPECT_EQ(route(a_name, b_name), multi_node_route(spec, a, b)) << a_name << " -> " << b_name;
}

TEST(TopologyMultiNode, RailOptimisedCrossingRailsOverNvLink) {
  const auto spec = multi_spec(2, 4, ScaleOutNetwork::rail_optimized);
  Simulation sim(multi_node_cluster(spec));
  EXPECT_EQ(host_count(), 10u);
  EXPECT_EQ(link_count(), 2u * (1 + 8 + 8 + 8));  // no spines
  EXPECT_EQ(sim.platform().dimensions, (std::vector<int>{4, 2}));
  EXPECT_EQ(sim.platform().host_cpu, "node0.host");
  EXPECT_EQ(sim.platform().devices[6].name, "node1.dev2");
  EXPECT_EQ(sim.platform().devices[6].host_cpu, "node1.host");
  EXPECT_EQ(route(sim, 1, 7), (Names{"node0.dev1.fabric.up", "node0.dev3.fabric.down", "node0.dev3.nic.up",
                                     "node1.dev3.nic.down"}));
  EXPECT_EQ(route(sim, 1, 2), (Names{"node0.dev1.fabric.up", "node0.dev2.fabric.down"}));
  expect_routes_as_the_pure_function(sim, spec);
}

TEST(TopologyMultiNode, RailOptimisedCrossingRailsAtSpines) {
  const auto spec = multi_spec(3, 2, ScaleOutNetwork::rail_optimized, RailCrossing::spine);
  Simulation sim(multi_node_cluster(spec));
  EXPECT_EQ(host_count(), 9u);
  EXPECT_EQ(link_count(), 3u * (1 + 4 + 4 + 4) + 2 * 3 * 2);  // nodes, then 2 rails x 3 spines x 2
  EXPECT_EQ(route(sim, 0, 5), (Names{"node0.dev0.nic.up", "rail0-spine2.up", "rail1-spine2.down",
                                     "node2.dev1.nic.down"}));
  expect_routes_as_the_pure_function(sim, spec);
}

TEST(TopologyMultiNode, FatTreeOfLeavesAndSpines) {
  const auto spec = multi_spec(4, 2, ScaleOutNetwork::fat_tree, RailCrossing::nvlink_first, 2);
  Simulation sim(multi_node_cluster(spec));
  EXPECT_EQ(host_count(), 12u);
  EXPECT_EQ(link_count(), 4u * (1 + 4 + 4 + 4) + 2 * 4 * 2);  // nodes, then 2 leaves x 4 spines x 2
  EXPECT_EQ(route(sim, 1, 7), (Names{"node0.dev1.nic.up", "leaf0-spine3.up", "leaf1-spine3.down",
                                     "node3.dev1.nic.down"}));
  EXPECT_EQ(route(sim, 0, 3), (Names{"node0.dev0.nic.up", "node1.dev1.nic.down"}));
  expect_routes_as_the_pure_function(sim, spec);
}

// ---------------------------------------------------------------------------------------------------------
// Collectives give the right values on every builder

PlatformBuilder builder_named(const std::string& name) {
  if (name == "switch") return switch_cluster(testing::free_compute_cluster(6));
  if (name == "ring") return ring(ring_spec(6));
  if (name == "ring2") return ring(ring_spec(2));
  if (name == "full_mesh") return full_mesh(mesh_spec(5));
  if (name == "torus_4x2") return torus(torus_spec({4, 2}));
  if (name == "torus_2x2x2") return torus(torus_spec({2, 2, 2}));
  if (name == "torus_4x4x4") return torus(torus_spec({4, 4, 4}));
  if (name == "mesh_3x3") return torus(torus_spec({3, 3}, false));
  if (name == "fat_tree_2") return fat_tree(fat_tree_spec(7, 2, 4));
  if (name == "fat_tree_3") return fat_tree(fat_tree_spec(8, 3, 2));
  if (name == "dragonfly") return dragonfly(dragonfly_spec(3, 2, 2));
  if (name == "node_nvswitch") return accelerator_node(node_spec());
  if (name == "node_full_mesh") return accelerator_node(node_spec(NodeFabric::full_mesh, 4));
  if (name == "rails_nvlink") return multi_node_cluster(multi_spec(2, 4, ScaleOutNetwork::rail_optimized));
  if (name == "rails_spine")
    return multi_node_cluster(multi_spec(3, 2, ScaleOutNetwork::rail_optimized, RailCrossing::spine));
  if (name == "fat_tree_nodes") return multi_node_cluster(multi_spec(4, 2, ScaleOutNetwork::fat_tree));
  throw std::logic_error("no builder " + name);
}

class TopologyCollectives : public ::testing::TestWithParam<std::string> {};

TEST_P(TopologyCollectives, PsumAndAllGatherGiveTheRightValues) {
  Simulation sim(builder_named(GetParam()));
  const int p = sim.num_devices();
  constexpr int kWidth = 3;
  std::vector<double> values;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < kWidth; ++j) values.push_back(10 * i + j);
  auto f = pmap([](const Args& a) -> Tree { return Tree::tuple({psum(a[0].array(), "i"), all_gather(a[0].array(), "i")}); },
                {.axis_name = "i"});
  const Tree out = sim.device_get(f(sim, {Array::from_values({p, kWidth}, values)}));
  const Array& sums = out[0].leaf();
  const Array& gathered = out[1].leaf();
  ASSERT_EQ(sums.shape(), (Shape{p, kWidth}));
  ASSERT_EQ(gathered.shape(), (Shape{p, p, kWidth}));
  for (int d = 0; d < p; ++d)
    for (int j = 0; j < kWidth; ++j) {
      EXPECT_EQ(sums.item(d * kWidth + j), 10.0 * p * (p - 1) / 2 + p * j) << "device " << d;
      for (int i = 0; i < p; ++i) EXPECT_EQ(gathered.item((d * p + i) * kWidth + j), 10 * i + j) << "device " << d;
    }
  EXPECT_GT(sim.now(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Builders, TopologyCollectives,
                         ::testing::Values("switch", "ring", "ring2", "full_mesh", "torus_4x2", "torus_2x2x2",
                                           "torus_4x4x4", "mesh_3x3", "fat_tree_2", "fat_tree_3", "dragonfly",
                                           "node_nvswitch", "node_full_mesh", "rails_nvlink", "rails_spine",
                                           "fat_tree_nodes"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// ---------------------------------------------------------------------------------------------------------
// Closed-form times under the pinned alpha-beta model

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected)) << "actual " << actual << " expected " << expected;
}

class TopologyRingAllReduce : public ::testing::TestWithParam<int> {};

// Rank r sends to r+1: one hop on dev{r}.next, so alpha is one link's latency and beta its inverse bandwidth.
TEST_P(TopologyRingAllReduce, EqualsTheClosedForm) {
  const int p = GetParam();
  Simulation sim(ring(ring_spec(p)), {alpha_beta_config(), {{CollectiveKind::all_reduce, "ring"}}});
  const std::int64_t floats = 3 * 5 * 7 * 8 * 64;  // divisible by every p below
  auto f = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  f(sim, {Array::full({p, floats}, 1.0)});
  const double n = static_cast<double>(floats) * 4;
  const double alpha = kDeviceLink.latency;
  const double beta = 1 / kDeviceLink.bandwidth;
  const double expected = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n * beta;
  const auto report = sim.report();
  for (const auto& times : report.calls.back().times) expect_seconds(times.communication.at("psum"), expected);
}

INSTANTIATE_TEST_SUITE_P(DeviceCounts, TopologyRingAllReduce, ::testing::Values(2, 3, 4, 5, 8),
                         [](const ::testing::TestParamInfo<int>& param) { return "p" + std::to_string(param.param); });

// The host transfer of one pmap call whose input gives every device `bytes_per_device`, per device.
std::vector<double> host_transfer_times(Simulation& sim, std::int64_t bytes_per_device) {
  auto f = pmap([](const Args& a) -> Tree { return a[0].array(); });
  f(sim, {Array::full({sim.num_devices(), bytes_per_device / 4}, 1.0)});
  const auto report = sim.report();
  std::vector<double> times;
  for (const auto& t : report.calls.back().times) times.push_back(t.transfer);
  return times;
}

// 8 devices receive n bytes each over their own 10 GB/s PCIe links, all through one 40 GB/s host memory:
// each gets 5 GB/s, so all finish after latency + 8n / 40 GB/s.
TEST(TopologyHostMemory, ConcurrentHostTransfersShareIt) {
  Simulation sim(accelerator_node(node_spec(NodeFabric::nvswitch, 8, 40e9)), {alpha_beta_config()});
  const std::int64_t n = 1 << 20;
  for (double t : host_transfer_times(sim, n)) expect_seconds(t, kHostLink.latency + 8.0 * n / 40e9);
}

// With 800 GB/s of host memory the PCIe links are the bottleneck again.
TEST(TopologyHostMemory, AbundantHostMemoryLeavesPcieTheBottleneck) {
  Simulation sim(accelerator_node(node_spec(NodeFabric::nvswitch, 8, 800e9)), {alpha_beta_config()});
  const std::int64_t n = 1 << 20;
  for (double t : host_transfer_times(sim, n)) expect_seconds(t, kHostLink.latency + n / kHostLink.bandwidth);
}

// Each node has its own CPU and memory: 2 nodes of 4 devices, each node's 4 transfers share its 40 GB/s.
TEST(TopologyHostMemory, EachNodeHasItsOwn) {
  Simulation sim(multi_node_cluster(multi_spec(2, 4, ScaleOutNetwork::rail_optimized)), {alpha_beta_config()});
  const std::int64_t n = 1 << 20;
  for (double t : host_transfer_times(sim, n)) expect_seconds(t, kHostLink.latency + 4.0 * n / 40e9);
}

// ---------------------------------------------------------------------------------------------------------
// Bad input: every message exactly

TEST(TopologyBadInput, Ring) {
  EXPECT_EQ(error_of(ring, ring_spec(1)), "ring: num_devices must be at least 2 (got 1)");
  auto spec = ring_spec(4);
  spec.device_link.bandwidth = 0;
  EXPECT_EQ(error_of(ring, spec), "ring device_link: bandwidth must be positive and finite (got 0 B/s)");
  spec = ring_spec(4);
  spec.host_link.latency = -1e-6;
  EXPECT_EQ(error_of(ring, spec), "ring host_link: latency must be finite and >= 0 (got -1e-06 s)");
  spec = ring_spec(4);
  spec.device.memory_capacity = 0;
  EXPECT_EQ(error_of(ring, spec), "ring device: device 'test-device': memory_capacity must be positive (got 0)");
  EXPECT_EQ(error_of(ring, ring_spec(2)), "");
}

TEST(TopologyBadInput, FullMesh) {
  EXPECT_EQ(error_of(full_mesh, mesh_spec(1)), "full mesh: num_devices must be at least 2 (got 1)");
  EXPECT_EQ(error_of(full_mesh, mesh_spec(1025)),
            "full mesh: num_devices must be at most 1024 (got 1025): a link per ordered pair of devices makes "
            "p(p-1) = 1049600 links; use a switch, fat tree or dragonfly instead");
  auto spec = mesh_spec(4);
  spec.device_link.bandwidth = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(full_mesh, spec), "full mesh device_link: bandwidth must be positive and finite (got inf B/s)");
  spec = mesh_spec(4);
  spec.host_link.bandwidth = -1;
  EXPECT_EQ(error_of(full_mesh, spec), "full mesh host_link: bandwidth must be positive and finite (got -1 B/s)");
}

TEST(TopologyBadInput, Torus) {
  auto spec = torus_spec({4, 4, 4});
  spec.num_devices = 32;
  EXPECT_EQ(error_of(torus, spec), "torus: shape 4x4x4 has 64 devices but num_devices is 32");
  EXPECT_EQ(error_of(torus, TorusSpec{8, {8}, true, free_device(), kDeviceLink, kHostLink}),
            "torus: shape must have 2 or 3 dimensions (got 1: 8)");
  EXPECT_EQ(error_of(torus, TorusSpec{16, {2, 2, 2, 2}, true, free_device(), kDeviceLink, kHostLink}),
            "torus: shape must have 2 or 3 dimensions (got 4: 2x2x2x2)");
  EXPECT_EQ(error_of(torus, TorusSpec{0, {4, 0}, true, free_device(), kDeviceLink, kHostLink}),
            "torus: every shape entry must be at least 1 (got 4x0)");
  EXPECT_EQ(error_of(torus, torus_spec({1, 1})), "torus: num_devices must be at least 2 (got 1)");
  spec = torus_spec({4, 4});
  spec.device_link.bandwidth = 0;
  EXPECT_EQ(error_of(torus, spec), "torus device_link: bandwidth must be positive and finite (got 0 B/s)");
  spec = torus_spec({4, 4});
  spec.host_link.bandwidth = 0;
  EXPECT_EQ(error_of(torus, spec), "torus host_link: bandwidth must be positive and finite (got 0 B/s)");
}

TEST(TopologyBadInput, FatTree) {
  EXPECT_EQ(error_of(fat_tree, fat_tree_spec(16, 4, 2)), "fat tree: levels must be 2 or 3 (got 4)");
  EXPECT_EQ(error_of(fat_tree, fat_tree_spec(16, 2, 1)), "fat tree: k must be at least 2 (got 1)");
  EXPECT_EQ(error_of(fat_tree, fat_tree_spec(17, 2, 4)),
            "fat tree: num_devices must be between 2 and k^levels = 4^2 = 16 (got 17)");
  EXPECT_EQ(error_of(fat_tree, fat_tree_spec(1, 3, 4)),
            "fat tree: num_devices must be between 2 and k^levels = 4^3 = 64 (got 1)");
  auto spec = fat_tree_spec(16, 2, 4);
  spec.switch_link.bandwidth = 0;
  EXPECT_EQ(error_of(fat_tree, spec), "fat tree switch_link: bandwidth must be positive and finite (got 0 B/s)");
  spec = fat_tree_spec(16, 2, 4);
  spec.device_link.latency = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(fat_tree, spec), "fat tree device_link: latency must be finite and >= 0 (got inf s)");
}

TEST(TopologyBadInput, Dragonfly) {
  EXPECT_EQ(error_of(dragonfly, dragonfly_spec(1, 4, 2)), "dragonfly: num_groups must be at least 2 (got 1)");
  EXPECT_EQ(error_of(dragonfly, dragonfly_spec(4, 0, 2)), "dragonfly: routers_per_group must be at least 1 (got 0)");
  EXPECT_EQ(error_of(dragonfly, dragonfly_spec(4, 2, 0)), "dragonfly: devices_per_router must be at least 1 (got 0)");
  EXPECT_EQ(error_of(dragonfly, dragonfly_spec(1 << 16, 1 << 10, 1 << 8)),
            "dragonfly: num_groups x routers_per_group x devices_per_router must be at most 2147483647 devices "
            "(got 17179869184)");
  auto spec = dragonfly_spec(4, 2, 2);
  spec.local_link.bandwidth = 0;
  EXPECT_EQ(error_of(dragonfly, spec), "dragonfly local_link: bandwidth must be positive and finite (got 0 B/s)");
  spec = dragonfly_spec(4, 2, 2);
  spec.global_link.bandwidth = 0;
  EXPECT_EQ(error_of(dragonfly, spec), "dragonfly global_link: bandwidth must be positive and finite (got 0 B/s)");
}

TEST(TopologyBadInput, AcceleratorNode) {
  EXPECT_EQ(error_of(accelerator_node, node_spec(NodeFabric::nvswitch, 0)),
            "accelerator node 'box': devices_per_node must be at least 1 (got 0)");
  EXPECT_EQ(error_of(accelerator_node, node_spec(NodeFabric::nvswitch, 8, -1)),
            "accelerator node 'box': host_memory_bandwidth must be finite and >= 0, 0 meaning not modelled (got -1 "
            "B/s)");
  EXPECT_EQ(error_of(accelerator_node, node_spec(NodeFabric::full_mesh, 2000)),
            "accelerator node 'box': a full_mesh node has at most 1024 devices (got 2000): a link per ordered pair");
  auto node = node_spec();
  node.nic.bandwidth = 0;
  EXPECT_EQ(error_of(accelerator_node, node), "accelerator node 'box' nic: bandwidth must be positive and finite (got 0 B/s)");
  node = node_spec();
  node.device_link.bandwidth = 0;
  EXPECT_EQ(error_of(accelerator_node, node),
            "accelerator node 'box' device_link: bandwidth must be positive and finite (got 0 B/s)");
  node = node_spec();
  node.host_link.latency = -1;
  EXPECT_EQ(error_of(accelerator_node, node), "accelerator node 'box' host_link: latency must be finite and >= 0 (got -1 s)");
  node = node_spec();
  node.host_speed = 0;
  EXPECT_EQ(error_of(accelerator_node, node),
            "accelerator node 'box': host_speed must be positive and finite (got 0 FLOP/s)");
  node = node_spec();
  node.fabric = static_cast<NodeFabric>(7);
  EXPECT_EQ(error_of(accelerator_node, node), "accelerator node 'box': fabric must be nvswitch or full_mesh (got 7)");
  node = node_spec();
  node.device.peak_flops.clear();
  EXPECT_EQ(error_of(accelerator_node, node),
            "accelerator node 'box' device: device 'test-device': peak_flops needs at least one dtype");
}

TEST(TopologyBadInput, MultiNodeCluster) {
  EXPECT_EQ(error_of(multi_node_cluster, multi_spec(0, 8, ScaleOutNetwork::rail_optimized)),
            "multi-node cluster: num_nodes must be at least 1 (got 0)");
  EXPECT_EQ(error_of(multi_node_cluster, multi_spec(4, 8, ScaleOutNetwork::fat_tree, RailCrossing::nvlink_first, 0)),
            "multi-node cluster: nodes_per_leaf must be at least 1 (got 0)");
  auto spec = multi_spec(4, 8, ScaleOutNetwork::fat_tree);
  spec.switch_link.bandwidth = 0;
  EXPECT_EQ(error_of(multi_node_cluster, spec),
            "multi-node cluster switch_link: bandwidth must be positive and finite (got 0 B/s)");
  spec.network = ScaleOutNetwork::rail_optimized;  // PXN builds no spines: the switch link is not used
  EXPECT_EQ(error_of(multi_node_cluster, spec), "");
  spec.rail_crossing = RailCrossing::spine;
  EXPECT_EQ(error_of(multi_node_cluster, spec),
            "multi-node cluster switch_link: bandwidth must be positive and finite (got 0 B/s)");
  spec = multi_spec(4, 8, ScaleOutNetwork::rail_optimized);
  spec.node.devices_per_node = 0;
  EXPECT_EQ(error_of(multi_node_cluster, spec),
            "multi-node cluster node 'box': devices_per_node must be at least 1 (got 0)");
  spec = multi_spec(4, 8, ScaleOutNetwork::rail_optimized);
  spec.network = static_cast<ScaleOutNetwork>(5);
  EXPECT_EQ(error_of(multi_node_cluster, spec), "multi-node cluster: network must be fat_tree or rail_optimized (got 5)");
  spec = multi_spec(4, 8, ScaleOutNetwork::rail_optimized);
  spec.rail_crossing = static_cast<RailCrossing>(3);
  EXPECT_EQ(error_of(multi_node_cluster, spec),
            "multi-node cluster: rail_crossing must be nvlink_first or spine (got 3)");
  spec = multi_spec(1 << 20, 1 << 12, ScaleOutNetwork::rail_optimized);
  EXPECT_EQ(error_of(multi_node_cluster, spec),
            "multi-node cluster: num_nodes x devices_per_node must be at most 2147483647 devices (got 4294967296)");
}

}  // namespace
}  // namespace spmdsim
