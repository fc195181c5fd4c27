// Sources, NVIDIA/nccl 2.30.7 (commit 5067397c), read for docs/collectives.md#protocols:
// - wire: src/include/device.h:75-86 (an LL line holds 8 data bytes in 16), :110-112 (an LL128 line 120 in
//   128);
// - latencies: src/graph/tuning.cc:149-176, baseLatencies and hwLatencies of the Ring rows (REFERENCES §2.6);
// - threads and thresholds: tuning.cc:244-257 (maxThreads), src/include/comm.h:49-51 and tuning.cc:588-595
//   (threadThresholds, LL's times the ranks for Ring), src/enqueue.cc:2093-2096 (the channel loop);
// - chunks: src/init.cc:810-813 (buffer sizes), src/include/collectives.h:19-26 (4 chunk steps of Ring
//   Simple, in slices of 2 steps), enqueue.cc:2222-2227 (stepSize = buffer / NCCL_STEPS, LL halved, LL128
//   times 15/16; slices for Ring Simple only), src/device/prims_simple.h:183-184 (a chunk in SlicePerChunk
//   slices, each waited for and posted on its own);
// - bandwidths and the tuner's time: tuning.cc:306-336 (LL x0.5 capped at llMaxBw, LL128 x0.92 capped per
//   channel), :376-433 (algorithm bandwidth and latency of Ring), :630-655 (time = latency + bytes / bw, the
//   multi-node Simple ring's latency x 1.4),
//   enqueue.cc:2035-2044 (the lowest time wins).
#include "collectives/nccl_protocols.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"
#include "collectives/nccl_net_graph.hpp"
#include "collectives/rccl_protocols.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {
namespace {

constexpr Seconds kMicrosecond = 1e-6;

constexpr NcclProtocolFigures kLL{16.0 / 8.0, 6.6 * kMicrosecond, 0.6 * kMicrosecond, 2.7 * kMicrosecond, 512,
                                  8,          32 * 1024.0,         1};
constexpr NcclProtocolFigures kLL128{
    128.0 / 120.0, 14.0 * kMicrosecond, 1.9 * kMicrosecond, 4.0 * kMicrosecond, 640, 8, 576000.0, 1};
constexpr NcclProtocolFigures kSimple{1.0, 8.4 * kMicrosecond, 3.4 * kMicrosecond, 14.0 * kMicrosecond, 512,
                                      64,  2 * 1024.0 * 1024.0, 2};

// tuning.cc:393-396: across nodes a step inside the node costs at least the proxy's overhead, 1 us (2 us
// on AMD hosts), three times that with Simple.
constexpr Seconds kNetOverhead = 1 * kMicrosecond;
constexpr double kRingPlateauFactor = 1.4;

}  // namespace

int at_most_one_per_element(int channels, std::int64_t elements_per_rank) {
  return static_cast<int>(
      std::min<std::int64_t>(std::max(1, channels), std::max<std::int64_t>(1, elements_per_rank)));
}

int nccl_ring_steps(CollectiveKind kind, int count) {
  return kind == CollectiveKind::all_reduce ? 2 * (count - 1) : count - 1;
}

NcclRingCall nccl_ring_call(const NcclNode& node, CollectiveKind kind, const std::vector<int>& dimensions,
                            std::int64_t elements_per_rank, std::int64_t itemsize, int max_channels,
                            const std::string& protocol) {
  const int ranks = group_size(dimensions);
  const int nodes = group_nodes(dimensions);
  const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
  const NcclProtocol chosen =
      protocol.empty() ? nccl_tuner_protocol(node, kind, ranks, nodes, bytes) : parse_nccl_protocol(protocol);
  return {chosen,
          at_most_one_per_element(nccl_call_channels(chosen, ranks, bytes, max_channels), elements_per_rank)};
}

std::string_view nccl_protocol_name(NcclProtocol protocol) {
  return nccl_protocol_names()[static_cast<std::size_t>(protocol)];
}

NcclProtocol parse_nccl_protocol(std::string_view name) {
  for (NcclProtocol protocol : kNcclProtocols)
    if (nccl_protocol_name(protocol) == name) return protocol;
  throw ValueError(fmt::format("unknown NCCL protocol '{}'; valid: {} (or none: the tuner's)", name,
                               fmt::join(nccl_protocol_names(), ", ")));
}

const NcclProtocolFigures& nccl_protocol_figures(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::ll:
      return kLL;
    case NcclProtocol::ll128:
      return kLL128;
    case NcclProtocol::simple:
      return kSimple;
  }
  throw std::logic_error("unreachable NCCL protocol");
}

double nccl_ring_bus_bandwidth(const NcclNode& node, NcclProtocol protocol, int local, int nodes) {
  const NcclGraph graph = nccl_ring_graph(node, local, nodes);
  const double bandwidth = nccl_graph_bandwidth(graph, nodes);
  const std::size_t node_column = static_cast<std::size_t>(std::clamp(nodes, 1, 3) - 1);
  switch (protocol) {
    case NcclProtocol::ll:
      return std::min(node.ll_max_bandwidth[node_column], 0.5 * bandwidth);
    case NcclProtocol::ll128:
      return std::min(0.92 * bandwidth, graph.channels * node.ll128_graph_channel_bandwidth);
    case NcclProtocol::simple:
      return bandwidth;
  }
  throw std::logic_error("unreachable NCCL protocol");
}

Seconds nccl_ring_tuner_time(const NcclNode& node, NcclProtocol protocol, CollectiveKind kind, int ranks,
                             int nodes, double bytes) {
  const auto& figures = nccl_protocol_figures(protocol);
  const int steps = nccl_ring_steps(kind, ranks);
  if (steps == 0) return 0;
  const int steps_across = nodes > 1 ? nccl_ring_steps(kind, nodes) : 0;
  Seconds step_inside = figures.nvlink_step_latency;
  if (nodes > 1)
    step_inside = std::max(step_inside, kNetOverhead * (protocol == NcclProtocol::simple ? 3 : 1));
  Seconds latency =
      figures.base_latency + (steps - steps_across) * step_inside + steps_across * figures.net_step_latency;
  // tuning.cc:650-653, the ring's "plateau effect": a multi-node Simple all-reduce of at least 64 bytes per
  // channel and rank counts 1.4 times its latency (on SM80 and later, every preset's GPU).
  const int local = ranks / nodes;
  if (nodes > 1 && protocol == NcclProtocol::simple && kind == CollectiveKind::all_reduce &&
      bytes / (nccl_comm_channels(node, local, nodes) * static_cast<double>(ranks)) >= 64)
    latency *= kRingPlateauFactor;
  const double algorithm_bandwidth =
      nccl_ring_bus_bandwidth(node, protocol, local, nodes) * ranks / static_cast<double>(steps);
  return latency + bytes / algorithm_bandwidth;
}

NcclProtocol nccl_tuner_protocol(const NcclNode& node, CollectiveKind kind, int ranks, int nodes,
                                 double bytes) {
  NcclProtocol best = NcclProtocol::ll;
  Seconds best_time = nccl_ring_tuner_time(node, best, kind, ranks, nodes, bytes);
  for (NcclProtocol protocol : kNcclProtocols)
    if (const Seconds time = nccl_ring_tuner_time(node, protocol, kind, ranks, nodes, bytes);
        time < best_time) {
      best = protocol;
      best_time = time;
    }
  return best;
}

int nccl_call_channels(NcclProtocol protocol, int ranks, double bytes, int max_channels) {
  const auto& figures = nccl_protocol_figures(protocol);
  const double threshold = figures.thread_threshold * (protocol == NcclProtocol::ll ? ranks : 1);
  int channels = std::max(1, max_channels);
  while (channels >= 2 && bytes < channels * figures.threads * threshold) --channels;
  return channels;
}

Seconds nccl_ring_fill(const ChannelProtocol& channel, CollectiveKind kind,
                       const std::vector<int>& dimensions, double first_step_bytes) {
  const int nodes = group_nodes(dimensions);
  const int steps = nccl_ring_steps(kind, group_size(dimensions));
  const int steps_across = nodes > 1 ? nccl_ring_steps(kind, nodes) : 0;
  const Seconds hidden = channel.hidden_by_slices(first_step_bytes);
  return (steps - steps_across) * std::min(channel.step_overhead, hidden) +
         steps_across * std::min(channel.step_overhead_across, hidden);
}

NcclRingPlan nccl_ring_plan(const Communicator& comm, CollectiveKind kind, std::int64_t elements_per_rank,
                            std::int64_t itemsize) {
  NcclRingPlan plan;
  const NcclNode* node = comm.nccl_node();
  if (node == nullptr) {
    plan.channels = at_most_one_per_element(comm.channels(), elements_per_rank);
    if (const RcclNode* rccl = comm.rccl_node()) {
      const int ranks = group_size(comm.dimensions());
      const double bytes = static_cast<double>(elements_per_rank) * ranks * static_cast<double>(itemsize);
      plan.protocol = rccl_ring_protocol(*rccl, kind, ranks, bytes, comm.protocol());
      plan.channel = rccl_ring_channel(*rccl, *plan.protocol, comm.channels());
    }
    return plan;
  }
  const auto choice = nccl_ring_call(*node, kind, comm.dimensions(), elements_per_rank, itemsize,
                                     comm.channels(), comm.protocol());
  const NcclProtocol protocol = choice.protocol;
  const auto& figures = nccl_protocol_figures(protocol);
  const int nodes = group_nodes(comm.dimensions());
  const int local = group_size(comm.dimensions()) / nodes;
  const auto& ll = nccl_protocol_figures(NcclProtocol::ll);
  plan.protocol = protocol;
  plan.channels = choice.channels;
  plan.loop_elements = std::max<std::int64_t>(1, static_cast<std::int64_t>(figures.chunk_bytes) / itemsize);
  plan.channel = {
      .wire_bytes_per_byte = figures.wire_bytes_per_byte,
      .rate =
          nccl_ring_bus_bandwidth(*node, protocol, local, nodes) / nccl_comm_channels(*node, local, nodes),
      .start_latency = figures.base_latency,
      // The platform's routes carry LL's step latency, the wire's and the switch's; the other protocols'
      // flags, fences and proxy add the rest.
      .step_overhead = figures.nvlink_step_latency - ll.nvlink_step_latency,
      .step_overhead_across = figures.net_step_latency - ll.net_step_latency,
      .slices = figures.slices,
      .reduces_in_flight = true,
  };
  const std::int64_t largest_part = split_flat_size(elements_per_rank, plan.channels, 0);  // channel 0's
  const std::int64_t first_step = std::min(plan.loop_elements, largest_part);
  plan.channel.start_latency +=
      nccl_ring_fill(plan.channel, kind, comm.dimensions(), static_cast<double>(first_step * itemsize));
  return plan;
}

}  // namespace spmdsim::collectives

namespace spmdsim {

std::span<const std::string_view> nccl_protocol_names() {
  static constexpr std::string_view kNames[] = {"LL", "LL128", "Simple"};
  return kNames;
}

}  // namespace spmdsim
