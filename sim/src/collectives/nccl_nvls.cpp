// Sources, NVIDIA/nccl 2.30.7 (commit 5067397c), read for docs/collectives.md#nvls:
// - the graph: src/graph/search.cc:410-438 (ncclTopoSearchTryNvls: GPU g's channel spends 2 x speed on g's
//   paths, speed on the others'), :1124-1139 (one channel per GPU), :1170-1174 (the first speed tried),
//   :1266-1277 (the second pass raises bwInter while below twice bwIntra), :145 (GPU/NVSwitch paths spend
//   bwIntra);
// - the tuner: src/graph/tuning.cc:139-144 (nvlsEfficiency), :301 (Simple only), :307-323 (bus bandwidth,
//   all-reduce pipelining two operations), :379 (algbw = busbw x nRanks / nsteps), :424-426 (latency);
// - NVLSTree: search.cc:1155-1173 (the speeds across nodes, starting within the NIC), :1273-1278 (bwInter
//   raised), tuning.cc:205-211 (perChMaxNVLSTreeBws), :319-322 (bwInter doubled on 2 nodes, the cap), :161 and
//   :173 (latency: NVLink 25 us, network 20.9 us), :427-428 (both ways through floor(lg nodes) levels),
//   :642-645 (the tree correction per size, on Blackwell x86 hosts);
// - NVLSTree's kernel: src/device/all_reduce.h:527-635 (each CTA's loop, nHeads chunks, one per head, through
//   scatter, the switch's reduction, the network up and down the tree, the multicast and gather),
//   src/enqueue.cc:2084-2091 (its CTAs, nvlsChannels) and :2276-2286 (its chunk), transport/nvls.cc:155-243
//   (the CTAs and chunks per architecture and node count), src/graph/connect.cc:248-263 (one head per NVLS
//   graph channel).
// - NVLS's kernel on one node: src/device/all_reduce.h:390-460 (each CTA's loop, nHeads chunks through
//   scatter, the switch's reduction and multicast, and gather, three warp groups in a pipeline),
//   enqueue.cc:2258-2275 (its chunk), transport/nvls.cc:160 and :213-224 (NCCL_NVLS_CHUNKSIZE, 128 KiB on one
//   node).
#include "collectives/nccl_nvls.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "collectives/nccl_net_graph.hpp"
#include "collectives/nccl_protocols.hpp"
#include "collectives/nccl_tree.hpp"

namespace spmdsim::collectives {
namespace {

// The tuner's algorithm bandwidth of an NVLS all-reduce: busbw x ranks / (2 (ranks - 1)).
double nvls_algorithm_bandwidth(const NcclNode& node, int ranks) {
  return nvls_bus_bandwidth(node, ranks) * ranks / (2.0 * (ranks - 1));
}

}  // namespace

bool has_nvls(const NcclNode& node) { return node.nvls_efficiency > 0 && !node.intra_search_speeds.empty(); }

bool has_nvls_tree(const NcclNode& node) { return has_nvls(node) && has_net_graphs(node); }

NcclGraph nvls_graph(const NcclNode& node, int local) {
  if (!has_nvls(node)) throw std::logic_error("an NVLS graph of a node without NVLS");
  const auto& speeds = node.intra_search_speeds;
  NcclGraph graph{.channels = local};
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (local + 1) * speeds[i] > node.nvlink_bandwidth) ++i;
  graph.intra = speeds[i];
  while (i > 0 && speeds[i] < 2 * graph.intra) --i;
  graph.inter = speeds[i];
  return graph;
}

NcclGraph nvls_graph(const NcclNode& node, int local, int nodes) {
  if (nodes == 1) return nvls_graph(node, local);
  if (!has_nvls_tree(node))
    throw std::logic_error("a multi-node NVLS graph of a node without NVLSTree figures");
  const auto& speeds = node.inter_search_speeds;
  const double nic = nccl_nic_speed(node, local);
  NcclGraph graph{.channels = local};
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > nic || (local + 1) * speeds[i] > node.nvlink_bandwidth)) ++i;
  graph.intra = speeds[i];
  while (i > 0 && speeds[i] < 2 * graph.intra && speeds[i - 1] <= nic) --i;
  graph.inter = speeds[i];
  return graph;
}

namespace {

// What one NVLS channel moves inside a node: bwIntra x nvlsEfficiency x (channels - 1) / channels, twice
// for an all-reduce, which pipelines its reduction and its multicast (tuning.cc:309-315).
double nvls_channel_intra_bandwidth(const NcclNode& node, const NcclGraph& graph) {
  return graph.intra * node.nvls_efficiency * (graph.channels - 1) / static_cast<double>(graph.channels) * 2;
}

}  // namespace

double nvls_bus_bandwidth(const NcclNode& node, int ranks) {
  const NcclGraph graph = nvls_graph(node, ranks);
  return graph.channels * std::min(nvls_channel_intra_bandwidth(node, graph), graph.inter);
}

double nvls_tree_bus_bandwidth(const NcclNode& node, int local, int nodes) {
  const NcclGraph graph = nvls_graph(node, local, nodes);
  const double inter = graph.inter * (nodes <= 2 ? 2 : 1);
  const double cap = node.nvls_tree_channel_bandwidth[nodes <= 2 ? 0 : 1];
  return graph.channels * std::min({nvls_channel_intra_bandwidth(node, graph), inter, cap});
}

Seconds nvls_tree_latency(int nodes) {
  constexpr Seconds kNetworkLevel = 20.9e-6;  // hwLat NET of NVLSTree with Simple (tuning.cc:173)
  return kNvlsLatency + 2 * std::floor(std::log2(nodes)) * kNetworkLevel;
}

namespace {

// The node's figure for NVLSTree on this many nodes: 2, 3, or 4 and more.
template <class Figure>
Figure on_nodes(const std::array<Figure, 3>& figures, int nodes) {
  if (nodes < 2) throw std::logic_error("NVLSTree's figures on fewer than 2 nodes");
  return figures[static_cast<std::size_t>(std::min(nodes, 4) - 2)];
}

}  // namespace

namespace {

// NCCL's rule for both kernels' chunks: each step lowers `chunk` to its size while the call of `bytes` is
// below so many chunks per concurrent operation (one per CTA and head).
double lowered_chunk(double chunk, double concurrent, double bytes,
                     std::initializer_list<std::pair<double, double>> steps) {
  for (const auto& [chunks, size] : steps)
    if (bytes < chunks * concurrent * chunk && chunk > size) chunk = size;
  return chunk;
}

// What the first loop (or the whole call, if smaller) takes to cross `stages` pipeline stages at `rate`
// before every stage is busy.
Seconds loop_fill(double stages, double loop, double bytes, double rate) {
  return stages * std::min(loop, bytes) / rate;
}

}  // namespace

double nvls_tree_chunk(const NcclNode& node, int local, int nodes, double bytes) {
  const double concurrent = on_nodes(node.nvls_tree_ctas, nodes) * static_cast<double>(local);
  return lowered_chunk(on_nodes(node.nvls_tree_max_chunk, nodes), concurrent, bytes,
                       {{32.0, 262144.0}, {16.0, 131072.0}, {4.0, 65536.0}, {1.0, 32768.0}});
}

namespace {

// NVLS's concurrent operations on one node: one per CTA and head, every GPU a head.
double nvls_operations(const NcclNode& node, int ranks) {
  return node.nvls_ctas * static_cast<double>(ranks);
}

}  // namespace

double nvls_chunk(const NcclNode& node, int ranks, double bytes) {
  return lowered_chunk(kNvlsChunk, nvls_operations(node, ranks), bytes,
                       {{64.0, 65536.0}, {8.0, 32768.0}, {2.0, 16384.0}});
}

double nvls_call_algorithm_bandwidth(const NcclNode& node, int ranks, double bytes) {
  if (node.nvls_ctas <= 0) return nvls_algorithm_bandwidth(node, ranks);
  const Seconds step = nccl_protocol_figures(NcclProtocol::simple).nvlink_step_latency;
  const double chunks_per_byte = 1 / nvls_chunk(node, ranks, bytes) - 1 / kNvlsChunk;  // beyond the largest's
  const double per_byte = 1 / nvls_algorithm_bandwidth(node, ranks);
  return 1 / (per_byte + step / nvls_operations(node, ranks) * chunks_per_byte);
}

Seconds nvls_pipeline_fill(const NcclNode& node, int ranks, double bytes) {
  if (node.nvls_ctas <= 0) return 0;
  const double loop = nvls_operations(node, ranks) * nvls_chunk(node, ranks, bytes);
  return loop_fill(1, loop, bytes, nvls_call_algorithm_bandwidth(node, ranks, bytes));
}

namespace {

// The tuner's NVLSTree algorithm bandwidth for a call of `bytes`: busbw x ranks / (2 (ranks - 1)), scaled by
// the tree correction per size where the node's NCCL applies it (tuning.cc:642-645).
double nvls_tree_algorithm_bandwidth(const NcclNode& node, int local, int nodes, double bytes) {
  const int ranks = local * nodes;
  const double correction =
      node.nvls_tree_size_correction ? nccl_tree_correction(NcclProtocol::simple, bytes, 24) : 1.0;
  return nvls_tree_bus_bandwidth(node, local, nodes) * ranks / (2.0 * (ranks - 1)) * correction;
}

}  // namespace

Seconds nvls_tree_pipeline_fill(const NcclNode& node, int local, int nodes, double bytes) {
  const int ctas = on_nodes(node.nvls_tree_ctas, nodes);
  if (ctas <= 0) return 0;
  const double loop = ctas * static_cast<double>(local) * nvls_tree_chunk(node, local, nodes, bytes);
  const double crossings = 2 * std::ceil(std::log2(nodes));
  return loop_fill(crossings, loop, bytes, nvls_tree_algorithm_bandwidth(node, local, nodes, bytes));
}

Seconds nvls_tree_tuner_time(const NcclNode& node, int local, int nodes, double bytes) {
  return nvls_tree_latency(nodes) + bytes / nvls_tree_algorithm_bandwidth(node, local, nodes, bytes);
}

Seconds nvls_tuner_time(const NcclNode& node, int ranks, double bytes) {
  return kNvlsLatency + bytes / nvls_algorithm_bandwidth(node, ranks);
}

ChannelProtocol nvls_protocol(const Communicator& comm, double bytes) {
  const NcclNode* node = comm.nccl_node();
  if (node == nullptr || !has_nvls(*node)) return {};
  const int ranks = comm.size();
  return {.rate = nvls_call_algorithm_bandwidth(*node, ranks, bytes),
          .start_latency = kNvlsLatency + nvls_pipeline_fill(*node, ranks, bytes)};
}

ChannelProtocol nvls_tree_protocol(const Communicator& comm, double bytes) {
  const NcclNode* node = comm.nccl_node();
  if (node == nullptr || !has_nvls_tree(*node)) return {};
  const int local = comm.dimensions().front();
  const int nodes = comm.size() / local;
  return {.rate = nvls_tree_algorithm_bandwidth(*node, local, nodes, bytes),
          .start_latency = nvls_tree_latency(nodes) + nvls_tree_pipeline_fill(*node, local, nodes, bytes)};
}

}  // namespace spmdsim::collectives

namespace spmdsim {

int nccl_nvls_ctas(const NcclNode& node, int local, int nodes) {
  const int ctas = nodes == 1 ? node.nvls_ctas : collectives::on_nodes(node.nvls_tree_ctas, nodes);
  return ctas > 0 ? ctas : collectives::nvls_graph(node, local, nodes).channels;
}

}  // namespace spmdsim
