// What the engine needs to know of a platform: the host CPU that runs the host program and the devices,
// each a SimGrid host with its spec. Builders in topologies/ make one; sim/ never creates hosts or links.
// Hosts are named, not handed over: sim/ resolves the names to its engine's hosts, so that no SimGrid type
// crosses this header.
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmdsim/device_spec.hpp"

namespace spmdsim {

struct PlatformDevice {
  std::string name;
  std::string host;  // the SimGrid host that runs the device
  DeviceSpec spec;
  // The CPU host whose host link reaches this device (its node's); empty: the platform's host_cpu.
  std::string host_cpu;
  // The host standing for the switch of the device's node where that switch reduces in the network (NVLink
  // SHARP, NCCL's NVLS): its route from the device is the device's switch port up, to it the port down.
  // Empty where the node has no such switch.
  std::string reducing_switch;
};

// What NCCL's topology search and tuner hold for one GPU node (NCCL 2.30.7, src/graph/search.cc and
// tuning.cc; docs/collectives.md#protocols): the figures nccl_ring's protocols run at. Bandwidths are bus
// bandwidths in B/s. Builders of NVIDIA GPU nodes fill it; a platform without it runs nccl_ring with no
// protocol (the links' own rates, reductions after each step).
struct NcclNode {
  // Inside one node: comm->nChannels of a ring (the CUDA blocks a ring collective runs on), the ring graph's
  // channels (each comm channel carries half of one) and bwIntra, what one graph channel carries. Across nodes
  // NCCL searches other graphs, one channel per NIC (nccl_net_graph.hpp).
  int ring_channels = 0;
  int graph_channels = 0;
  double graph_bandwidth = 0;
  // llMaxBws: the LL protocol's cap on 1, 2 and >= 3 nodes (one node: the GPU architecture's row; across
  // nodes: the host CPU vendor's, tuning.cc:268-272).
  std::array<double, 3> ll_max_bandwidth{};
  double ll128_graph_channel_bandwidth = 0;  // perChMaxRingLL128Bws: LL128's cap per graph channel
  double net_bandwidth = 0;                  // the node's NICs together (bwInter's ceiling across nodes)
  // One NIC's speed as NCCL's topology counts it (its port's nominal rate: 50e9 for 400 Gb/s), which bounds
  // the speed of a graph channel across nodes; 0: net_bandwidth over the node's devices.
  double nic_speed = 0;
  // NVLS (NVLink SHARP), where the node's NVSwitch reduces: NCCL's nvlsEfficiency (0: no NVLS, as before
  // Hopper), the NVLink bandwidth of one GPU as NCCL's graph search spends it (nvlBw x links), and the
  // search's speeds inside a node (search.cc's speedArrayIntra of the architecture), from which the NVLS
  // graph's bandwidths follow (nccl_protocols.hpp, nvls_bus_bandwidth).
  double nvls_efficiency = 0;
  double nvlink_bandwidth = 0;
  std::vector<double> intra_search_speeds;
  // NVLSTree (NVLS inside each node, a double binary tree of the nodes across them): the search's speeds
  // when the group spans nodes (search.cc's speedArrayInter of the architecture), from which the multi-node
  // NVLS graph follows, and the tuner's cap per channel on 2 and on 3 or more nodes (perChMaxNVLSTreeBws).
  std::vector<double> inter_search_speeds;
  std::array<double, 2> nvls_tree_channel_bandwidth{};
  // The CTAs (channels, as NCCL_DEBUG prints them) NVLS runs on inside one node, and NVLSTree's kernel on 2,
  // 3 and >= 4 nodes (transport/nvls.cc, ncclNvlsTuning): its CTAs and the largest chunk, in bytes, it cuts a
  // head's share of a loop into (nccl_nvls.hpp, nvls_tree_chunk).
  int nvls_ctas = 0;
  std::array<int, 3> nvls_tree_ctas{};
  std::array<double, 3> nvls_tree_max_chunk{};
  // Whether NCCL's tuner scales NVLSTree's bandwidth by its tree correction per size (tuning.cc: Blackwell on
  // x86 hosts).
  bool nvls_tree_size_correction = false;
  // NCCL's Tree (chains inside nodes, a double binary tree of the nodes): the tuner's caps per graph channel
  // on 1, 2 and >= 3 nodes, Simple (perChMaxTreeBws) and LL128 (perChMaxTreeLL128Bws).
  std::array<double, 3> tree_channel_bandwidth{};
  std::array<double, 3> tree_ll128_channel_bandwidth{};
  std::string source;                        // where the figures come from
};

// RCCL's figures for a node of AMD GPUs it drives: the bus bandwidth of its ring graph (nChannels x bwIntra,
// from which its tuner rates each protocol, ROCm/rccl src/graph/tuning.cc), and the rate of one channel of
// the MSCCL all-pairs all-reduce RCCL runs on 8 GPUs of a node up to 16 MiB (collectives/rccl_msccl.hpp).
// The protocols' latencies and bandwidth ratios are RCCL's own constants (collectives/rccl_protocols.cpp).
struct RcclNode {
  double bus_bandwidth = 0;           // B/s
  double msccl_channel_bandwidth = 0;  // B/s of data one MSCCL channel moves; 0: MSCCL not modelled
  // The fewest ranks of a communicator across nodes for which RCCL sends to another rail's NIC through that
  // rail's GPU (PXN, as NCCL does); below it a message leaves by its own GPU's NIC. 0: always PXN.
  int pxn_min_ranks = 0;
  std::string source;                 // where the figures come from
};

struct Platform {
  std::string description;  // one line for reports, e.g. "switch: 8 x generic, PCIe 32 GB/s"
  std::string host_cpu;     // the SimGrid host that runs the host program
  std::vector<PlatformDevice> devices;
  // The devices' logical shape (mixed radix, dimension 0 varying fastest), e.g. {8 per node, 4 nodes} or a
  // torus {4, 4, 4}; empty means flat. Hierarchical and multi-dimensional collectives follow it.
  std::vector<int> dimensions;
  // NCCL's figures for the node, where the devices are NVIDIA GPU nodes NCCL drives.
  std::optional<NcclNode> nccl;
  // RCCL's figures for the node, where the devices are AMD GPU nodes RCCL drives.
  std::optional<RcclNode> rccl;
  // Whether the devices of a node are linked pairwise, a link of their own per ordered pair (MI300X's xGMI,
  // the full_mesh builders): there a ring on each of a node's arc-disjoint Hamiltonian cycles drives other
  // links, as RCCL spreads its channels over all of a GPU's xGMI links.
  bool full_mesh_nodes = false;
  // Whether the devices are a torus (or mesh) of `dimensions`, each linked to its neighbours along every
  // dimension, both ways (TPU slices, the torus builder): an all-reduce there drives all those links at once.
  bool torus = false;
  // Whether that torus links the last device along each dimension back to the first; false: a mesh (TPU v5e
  // slices below the 16 x 16 pod, --topology mesh), whose rings close over the other way's links.
  bool torus_wraparound = false;

  // The logical shape of the first p devices, as a collective over them in platform order takes it: the
  // platform's where they are whole blocks of it (p = d0 x ... x d(j-1) x k with k <= dj: {d0, ..., d(j-1), k},
  // so the first k nodes of a cluster are {devices per node, k}), else flat {p}.
  std::vector<int> first_devices_shape(int p) const;
  // Whether each node of the first p devices (blocks of first_devices_shape(p)[0]) has a switch that reduces
  // in the network, shared by its devices there (NVLS on one node, NVLSTree across nodes).
  bool first_devices_switches_reduce(int p) const;
};

// How to build a platform, and the SimGrid network settings it is built for. Simulation calls it once the
// SimGrid engine exists and runs under `network_config` ("network/model:CM02", ...) where neither the command
// line's --cfg nor SimulationOptions::simgrid_config sets the same key: SimGrid fixes its network model when
// the first zone is made, so the platform carries its model rather than having it set after it is built.
// topologies/' builders carry the model of the presets' fabrics (alpha_beta_config()); a builder made from a
// bare callable (and a SimGrid XML file) carries none: SimGrid's defaults (LV08).
class PlatformBuilder {
 public:
  PlatformBuilder() = default;
  template <class Build>
  requires std::is_invocable_r_v<Platform, Build&> &&
      (!std::same_as<std::remove_cvref_t<Build>, PlatformBuilder>)PlatformBuilder(
          Build build, std::vector<std::string> network_config = {})  // NOLINT: a callable is a builder
      : build_(std::move(build)), network_config_(std::move(network_config)) {}

  Platform operator()() const { return build_(); }
  const std::vector<std::string>& network_config() const { return network_config_; }
  // The same platform under other network settings.
  PlatformBuilder with_network_config(std::vector<std::string> network_config) const {
    PlatformBuilder builder = *this;
    builder.network_config_ = std::move(network_config);
    return builder;
  }

 private:
  std::function<Platform()> build_;
  std::vector<std::string> network_config_;
};

}  // namespace spmdsim
