// NCCL's ring and tree graphs across nodes (nccl_net_graph.hpp): one graph channel per NIC at the fastest
// inter-node speed its NIC carries and every GPU's NVLink forwards, as NCCL 2.30.7's search finds them on the
// node presets' 8 x 400 Gb/s (H100, B200) and 8 x 200 Gb/s (A100) NICs, the tree's bwIntra raised on its
// second pass, each graph channel run twice, and one node's own graph kept.
#include <gtest/gtest.h>

#include <string>

#include "collectives/nccl_net_graph.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim {
namespace {

constexpr double kGB = 1e9;
using collectives::nccl_comm_channels;
using collectives::nccl_graph_bandwidth;
using collectives::nccl_ring_graph;
using collectives::nccl_tree_graph;

NcclNode preset(const std::string& name) {
  return *topologies::platform_nccl(topologies::node_preset(name).spec());
}

TEST(NcclNetGraph, OneNodeKeepsTheNodesGraphAndChannels) {
  const NcclNode h = preset("dgx_h100");
  const auto ring = nccl_ring_graph(h, 8, 1);
  EXPECT_EQ(ring.channels, 12);
  EXPECT_DOUBLE_EQ(ring.intra, 30 * kGB);
  EXPECT_EQ(nccl_comm_channels(h, 8, 1), 24);
}

TEST(NcclNetGraph, HopperAcrossNodesIsEightChannelsOf48GBs) {
  // The NIC's port is 50 GB/s (400 Gb/s), not the 47 its transfers achieve: 48 fits, as NCCL printed it on
  // 2 x 8 H200-class GPUs ("nChannels 8, bw 48.000000/48.000000"). A GPU forwards 7 channels: 336 of 370.8.
  const NcclNode h = preset("dgx_h100");
  EXPECT_DOUBLE_EQ(h.nic_speed, 50 * kGB);
  for (int nodes : {2, 4}) {
    const auto ring = nccl_ring_graph(h, 8, nodes);
    EXPECT_EQ(ring.channels, 8);
    EXPECT_DOUBLE_EQ(ring.intra, 48 * kGB);
    EXPECT_DOUBLE_EQ(ring.inter, 48 * kGB);
    EXPECT_EQ(nccl_comm_channels(h, 8, nodes), 16);  // each graph channel twice
  }
  // 48 is Hopper's fastest speed across nodes: the tree has nothing faster to raise bwIntra to.
  EXPECT_DOUBLE_EQ(nccl_tree_graph(h, 8, 2).intra, 48 * kGB);
}

TEST(NcclNetGraph, BlackwellsTreeRaisesBwIntraToTwiceBwInter) {
  // 96, 86, 80 exceed the NIC; 48 fits. The tree's second pass takes 80, 86, then 96 (7 x 96 = 672 within
  // 721.8), where it reaches twice bwInter.
  const NcclNode b = preset("dgx_b200");
  EXPECT_DOUBLE_EQ(nccl_ring_graph(b, 8, 2).intra, 48 * kGB);
  const auto tree = nccl_tree_graph(b, 8, 2);
  EXPECT_EQ(tree.channels, 8);
  EXPECT_DOUBLE_EQ(tree.intra, 96 * kGB);
  EXPECT_DOUBLE_EQ(tree.inter, 48 * kGB);
  // The tuner reads bwIntra on two nodes, bwInter on more.
  EXPECT_DOUBLE_EQ(nccl_graph_bandwidth(tree, 2), 8 * 96 * kGB);
  EXPECT_DOUBLE_EQ(nccl_graph_bandwidth(tree, 4), 8 * 48 * kGB);
}

TEST(NcclNetGraph, AmpereWith200GbNicsIsEightChannelsOf24GBs) {
  // 48, 30, 28 exceed the 25 GB/s port; the tree raises bwIntra to 28, 30, and stops where 7 x 48 passes the
  // 240 GB/s of NVLink.
  const NcclNode a = preset("dgx_a100");
  const auto ring = nccl_ring_graph(a, 8, 2);
  EXPECT_EQ(ring.channels, 8);
  EXPECT_DOUBLE_EQ(ring.intra, 24 * kGB);
  EXPECT_DOUBLE_EQ(nccl_tree_graph(a, 8, 2).intra, 30 * kGB);
  EXPECT_EQ(nccl_comm_channels(a, 8, 2), 16);
}

TEST(NcclNetGraph, ANicThatCarriesTwoChannelsWholeGetsTwo) {
  // 100 GB/s ports on Hopper: two 48 GB/s channels each, 7 x 2 x 48 = 672 passes the NVLink's 370.8, so one;
  // with 4 GPUs per node, 3 x 2 x 48 = 288 fits: 8 channels over 4 NICs.
  NcclNode h = preset("dgx_h100");
  h.nic_speed = 100 * kGB;
  EXPECT_EQ(nccl_ring_graph(h, 8, 2).channels, 8);
  EXPECT_EQ(nccl_ring_graph(h, 4, 2).channels, 8);
  EXPECT_EQ(nccl_comm_channels(h, 4, 2), 16);
}

TEST(NcclNetGraph, ThePublicSummaryIsTheRingsAndTheTreesGraphs) {
  // What `spmdsim presets` prints of a node across nodes: Blackwell's, whose tree differs from its ring.
  const NcclNetGraphs b = nccl_net_graphs(preset("dgx_b200"), 8, 2);
  EXPECT_EQ(b.call_channels, 16);
  EXPECT_EQ(b.graph_channels, 8);
  EXPECT_DOUBLE_EQ(b.ring_speed, 48 * kGB);
  EXPECT_DOUBLE_EQ(b.tree_intra, 96 * kGB);
  EXPECT_DOUBLE_EQ(b.tree_inter, 48 * kGB);
  // One node: its own graph and channels.
  const NcclNetGraphs h = nccl_net_graphs(preset("dgx_h100"), 8, 1);
  EXPECT_EQ(h.call_channels, 24);
  EXPECT_EQ(h.graph_channels, 12);
  EXPECT_DOUBLE_EQ(h.ring_speed, 30 * kGB);
}

TEST(NcclNetGraph, WithoutSearchSpeedsTheNodesGraphWithBwInterWithinTheNics) {
  NcclNode h = preset("dgx_h100");
  h.inter_search_speeds.clear();
  h.net_bandwidth = 8 * 25 * kGB;
  const auto ring = nccl_ring_graph(h, 8, 4);
  EXPECT_EQ(ring.channels, 12);
  EXPECT_DOUBLE_EQ(ring.intra, 30 * kGB);
  EXPECT_DOUBLE_EQ(nccl_graph_bandwidth(ring, 4), 8 * 25 * kGB);
  EXPECT_EQ(nccl_comm_channels(h, 8, 4), 24);
}

}  // namespace
}  // namespace spmdsim
