// RCCL's ring protocols on a node of MI300X (gfx942), as pure functions of RCCL's tuning constants
// (docs/collectives.md#rccl): each protocol's latencies and the share of the ring graph's bandwidth its tuner
// gives it, the protocol that tuner picks per call, and how nccl_ring's channels then move their messages.
// RCCL runs LL128 on gfx90a only, so these nodes have LL and Simple.
#pragma once

#include "collectives/nccl_protocols.hpp"

namespace spmdsim::collectives {

// One protocol's constants (ROCm/rccl 0cbce2a7; file and line in rccl_protocols.cpp).
struct RcclProtocolFigures {
  double wire_bytes_per_byte;  // LL 16/8, as NCCL's; Simple 1
  Seconds base_latency;        // baseLat, Ring
  Seconds step_latency;        // hwLat of tuning model 5 over xGMI, Ring: one step between two GPUs of a node
  double bandwidth_ratio;      // bwRatio of tuning model 5, Ring: the share of the ring graph's bus bandwidth
  int slices;                  // slices a ring step's chunk moves in (chunk steps / slice steps)
};
// Throws ValueError for LL128, which RCCL does not run on these nodes.
const RcclProtocolFigures& rccl_protocol_figures(NcclProtocol protocol);

// RCCL's tuner's time of a ring collective of `bytes` (the all-reduce vector; the gathered total for
// all-gather and reduce-scatter) over `ranks` devices: latency + bytes / algorithm bandwidth.
Seconds rccl_ring_tuner_time(const RcclNode& node, NcclProtocol protocol, CollectiveKind kind, int ranks,
                             double bytes);
// The protocol with the lowest tuner time (LL before Simple on a tie).
NcclProtocol rccl_tuner_protocol(const RcclNode& node, CollectiveKind kind, int ranks, double bytes);
// The protocol a ring call of `bytes` over `ranks` runs: `protocol` when given (ValueError for an unknown one
// or LL128), else the tuner's.
NcclProtocol rccl_ring_protocol(const RcclNode& node, CollectiveKind kind, int ranks, double bytes,
                                const std::string& protocol);

// How each of `channels` ring channels moves its messages under `protocol`: its wire bytes, its share of the
// protocol's bus bandwidth as its rate where RCCL rates the protocol below the graph's bandwidth, the
// protocol's latencies.
ChannelProtocol rccl_ring_channel(const RcclNode& node, NcclProtocol protocol, int channels);

}  // namespace spmdsim::collectives
