// Sources, ROCm/rccl commit 0cbce2a7 (2024-10-24), read for docs/collectives.md#rccl:
// - latencies: src/graph/tuning.cc:57-59 (baseLat, Ring: LL 12, Simple 17 us) and :224-229 (tuning model 5's
//   hwLat over NVLink, as RCCL types xGMI, Ring: LL 0.8, Simple 2.1 us); the 8-GPU xGMI topology models of
//   src/graph/rome_models.cc name tuning model 5 (rome_model_79 and its like: "tuning=5");
// - bandwidth shares: tuning.cc:234-239 (tuning model 5's bwRatio, Ring: LL 0.08, LL128 0, Simple 1, the same
//   on 2 and on more nodes) and :376-380 (busBw x bwRatio, then x nRanks / nsteps for a ring);
// - LL128 only on gfx90a: tuning.cc:511-514;
// - the tuner's time: tuning.cc:429-465 (Ring: baseLat + nsteps x hwLat) and :640-667 (latency + bytes / bw;
//   its ring correction factors apply across nodes only);
// - slices: src/include/collectives.h:15-16 (ALLREDUCE_CHUNKSTEPS = 2 x ALLREDUCE_SLICESTEPS, as NCCL's).
#include "collectives/rccl_protocols.hpp"

#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {
namespace {

constexpr Seconds kMicrosecond = 1e-6;

constexpr RcclProtocolFigures kLL{16.0 / 8.0, 12.0 * kMicrosecond, 0.8 * kMicrosecond, 0.08, 1};
constexpr RcclProtocolFigures kSimple{1.0, 17.0 * kMicrosecond, 2.1 * kMicrosecond, 1.0, 2};

}  // namespace

const RcclProtocolFigures& rccl_protocol_figures(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::ll:
      return kLL;
    case NcclProtocol::simple:
      return kSimple;
    case NcclProtocol::ll128:
      break;
  }
  throw ValueError("RCCL runs LL128 on gfx90a only; valid on this node: LL, Simple (or none: the tuner's)");
}

Seconds rccl_ring_tuner_time(const RcclNode& node, NcclProtocol protocol, CollectiveKind kind, int ranks,
                             double bytes) {
  const auto& figures = rccl_protocol_figures(protocol);
  const int steps = nccl_ring_steps(kind, ranks);
  if (steps == 0) return 0;
  const double algorithm_bandwidth = node.bus_bandwidth * figures.bandwidth_ratio * ranks / steps;
  return figures.base_latency + steps * figures.step_latency + bytes / algorithm_bandwidth;
}

NcclProtocol rccl_tuner_protocol(const RcclNode& node, CollectiveKind kind, int ranks, double bytes) {
  return rccl_ring_tuner_time(node, NcclProtocol::simple, kind, ranks, bytes) <
                 rccl_ring_tuner_time(node, NcclProtocol::ll, kind, ranks, bytes)
             ? NcclProtocol::simple
             : NcclProtocol::ll;
}

NcclProtocol rccl_ring_protocol(const RcclNode& node, CollectiveKind kind, int ranks, double bytes,
                                const std::string& protocol) {
  if (protocol.empty()) return rccl_tuner_protocol(node, kind, ranks, bytes);
  const NcclProtocol named = parse_nccl_protocol(protocol);
  rccl_protocol_figures(named);  // refuses LL128
  return named;
}

ChannelProtocol rccl_ring_channel(const RcclNode& node, NcclProtocol protocol, int channels) {
  const auto& figures = rccl_protocol_figures(protocol);
  // A protocol RCCL rates below the ring graph's bandwidth (LL) moves at most its share; Simple (a share of 1)
  // moves what the links give, and its reductions keep the device's time as the mesh rings' always did, so
  // that its large-message figure is the one docs/calibration.md compares.
  const bool capped = figures.bandwidth_ratio < 1;
  return {
      .wire_bytes_per_byte = figures.wire_bytes_per_byte,
      .rate = capped ? node.bus_bandwidth * figures.bandwidth_ratio / channels : 0,
      .start_latency = figures.base_latency,
      // The xGMI links' own latency is left out (the link preset has no published figure): a step's is all
      // RCCL's. Across nodes RCCL's figures are a steering value (Ring Simple 320 us over the network, to favour
      // Tree), not a cost; the steps that cross keep the xGMI step's and their route's.
      .step_overhead = figures.step_latency,
      .step_overhead_across = figures.step_latency,
      .slices = figures.slices,
      .reduces_in_flight = capped,
  };
}

}  // namespace spmdsim::collectives
