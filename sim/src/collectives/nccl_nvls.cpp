// Sources, NVIDIA/nccl 2.30.7 (commit 5067397c), read for docs/collectives.md#nvls:
// - the graph: src/graph/search.cc:410-438 (ncclTopoSearchTryNvls: GPU g's channel spends 2 x speed on g's
//   paths, speed on the others'), :1124-1139 (one channel per GPU), :1170-1174 (the first speed tried),
//   :1266-1277 (the second pass raises bwInter while below twice bwIntra), :145 (GPU/NVSwitch paths spend
//   bwIntra);
// - the tuner: src/graph/tuning.cc:139-144 (nvlsEfficiency), :301 (Simple only), :307-323 (bus bandwidth,
//   all-reduce pipelining two operations), :379 (algbw = busbw x nRanks / nsteps), :424-426 (latency).
#include "collectives/nccl_nvls.hpp"

#include <algorithm>
#include <stdexcept>

namespace spmdsim::collectives {
namespace {

// The tuner's algorithm bandwidth of an NVLS all-reduce: busbw x ranks / (2 (ranks - 1)).
double nvls_algorithm_bandwidth(const NcclNode& node, int ranks) {
  return nvls_bus_bandwidth(node, ranks) * ranks / (2.0 * (ranks - 1));
}

}  // namespace

bool has_nvls(const NcclNode& node) { return node.nvls_efficiency > 0 && !node.intra_search_speeds.empty(); }

NvlsGraph nvls_graph(const NcclNode& node, int local) {
  if (!has_nvls(node)) throw std::logic_error("an NVLS graph of a node without NVLS");
  const auto& speeds = node.intra_search_speeds;
  NvlsGraph graph{.channels = local};
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (local + 1) * speeds[i] > node.nvlink_bandwidth) ++i;
  graph.intra = speeds[i];
  while (i > 0 && speeds[i] < 2 * graph.intra) --i;
  graph.inter = speeds[i];
  return graph;
}

double nvls_bus_bandwidth(const NcclNode& node, int ranks) {
  const NvlsGraph graph = nvls_graph(node, ranks);
  const double intra =
      graph.intra * node.nvls_efficiency * (graph.channels - 1) / static_cast<double>(graph.channels) * 2;
  return graph.channels * std::min(intra, graph.inter);
}

Seconds nvls_tuner_time(const NcclNode& node, int ranks, double bytes) {
  return kNvlsLatency + bytes / nvls_algorithm_bandwidth(node, ranks);
}

ChannelProtocol nvls_protocol(const Communicator& comm) {
  const NcclNode* node = comm.nccl_node();
  if (node == nullptr || !has_nvls(*node)) return {};
  return {.rate = nvls_algorithm_bandwidth(*node, comm.size()), .start_latency = kNvlsLatency};
}

}  // namespace spmdsim::collectives
