// NCCL's three protocols and the choices NCCL makes per call, as pure functions of NCCL 2.30.7's constants
// (docs/collectives.md#protocols, ../shared/REFERENCES.md §2.6): what each protocol puts on the wire, its
// latencies, its chunk, how many channels a call of a given size runs on, and which protocol NCCL's tuner
// picks. nccl_ring's algorithms turn a plan of these into channels that move their messages accordingly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

enum class NcclProtocol { ll, ll128, simple };
inline constexpr NcclProtocol kNcclProtocols[] = {NcclProtocol::ll, NcclProtocol::ll128,
                                                  NcclProtocol::simple};

std::string_view nccl_protocol_name(NcclProtocol protocol);  // "LL", "LL128", "Simple", as NCCL_PROTO
// Throws ValueError naming the valid names for anything else.
NcclProtocol parse_nccl_protocol(std::string_view name);

// One protocol's constants (NCCL 2.30.7; file and line in nccl_protocols.cpp).
struct NcclProtocolFigures {
  double wire_bytes_per_byte;   // LL 16/8, LL128 128/120, Simple 1
  Seconds base_latency;         // baseLat, Ring
  Seconds nvlink_step_latency;  // hwLat NVLINK, Ring: one step between two GPUs of a node
  Seconds net_step_latency;     // hwLat NET, Ring: one step across nodes
  int threads;                  // threads of a ring channel
  int thread_threshold;         // bytes per thread before NCCL adds a channel (LL: per rank)
  double chunk_bytes;           // data one rank sends per ring step
  int slices;                   // slices a ring step's chunk moves in (chunk steps / slice steps)
};
const NcclProtocolFigures& nccl_protocol_figures(NcclProtocol protocol);

// `channels` (at least 1), fewer where a channel would get no element of each rank's contribution.
int at_most_one_per_element(int channels, std::int64_t elements_per_rank);

// Ring steps of one rank in a collective over `count` ranks (or nodes): 2(count-1) for the all-reduce,
// count-1 otherwise.
int nccl_ring_steps(CollectiveKind kind, int count);

// The bus bandwidth NCCL's tuner gives a ring of `protocol` over `local` GPUs on each of `nodes` nodes
// (tuning.cc: the ring graph's bandwidth, nccl_net_graph.hpp; LL halved and capped, LL128 at 0.92 and capped
// per graph channel), B/s.
double nccl_ring_bus_bandwidth(const NcclNode& node, NcclProtocol protocol, int local, int nodes);

// NCCL's tuner's time of a ring collective of `bytes` (the all-reduce vector; the gathered total for
// all-gather and reduce-scatter) over `ranks` devices on `nodes` nodes: latency + bytes / algorithm
// bandwidth.
Seconds nccl_ring_tuner_time(const NcclNode& node, NcclProtocol protocol, CollectiveKind kind, int ranks,
                             int nodes, double bytes);
// The protocol with the lowest tuner time (the first of LL, LL128, Simple on a tie).
NcclProtocol nccl_tuner_protocol(const NcclNode& node, CollectiveKind kind, int ranks, int nodes,
                                 double bytes);

// The channels NCCL runs a call on (enqueue.cc, topoGetAlgoInfo): from `max_channels` down while the call has
// fewer than channels x threads x threshold bytes, at least 1. `ranks` scales LL's threshold, as NCCL scales
// Ring's (1: Tree's, which it does not scale).
int nccl_call_channels(NcclProtocol protocol, int ranks, double bytes, int max_channels);

// What a ring call of NCCL's runs on, as NCCL_DEBUG=INFO prints it: the protocol (NCCL's tuner's for the size,
// or `protocol` when given) and the channels the size earns, at most `max_channels`. `dimensions` is the
// group's shape ({devices per node, nodes}), elements_per_rank what each rank contributes (all-reduce: its
// vector / p; all-gather: its piece; reduce-scatter: one block). Throws ValueError for an unknown protocol.
struct NcclRingCall {
  NcclProtocol protocol;
  int channels;
};
NcclRingCall nccl_ring_call(const NcclNode& node, CollectiveKind kind, const std::vector<int>& dimensions,
                            std::int64_t elements_per_rank, std::int64_t itemsize, int max_channels,
                            const std::string& protocol);

// What a ring's first pass waits of its steps' overheads beyond what later passes wait: nothing is in flight
// before it for a step's later slices to hide the overhead behind (ChannelProtocol::hidden_by_slices), so
// each step of its data's path round the ring pays it whole, once per call, as NCCL's tuner counts steps x
// hwLat once per call. `first_step_bytes` is what one rank sends per step in the first pass; the path's
// steps that cross nodes (nccl_ring_steps over the nodes) pay channel.step_overhead_across.
Seconds nccl_ring_fill(const ChannelProtocol& channel, CollectiveKind kind,
                       const std::vector<int>& dimensions, double first_step_bytes);

// How nccl_ring runs one call on `comm`: its channels, the elements of one ring pass per rank (a loop of
// NCCL's: one chunk per rank), and how its channels move their messages. Without NCCL's figures on the
// platform, the channels are comm.channels() (at most one per element) in one pass, with RCCL's protocol where
// the platform carries RCCL's figures (rccl_protocols.hpp), else none.
struct NcclRingPlan {
  std::optional<NcclProtocol> protocol;
  int channels = 1;
  std::int64_t loop_elements = 0;  // per rank per pass; 0: the whole part in one pass
  ChannelProtocol channel;
};
// elements_per_rank: what each rank contributes (all-reduce: its vector / p; all-gather: its piece;
// reduce-scatter: one block).
NcclRingPlan nccl_ring_plan(const Communicator& comm, CollectiveKind kind, std::int64_t elements_per_rank,
                            std::int64_t itemsize);

}  // namespace spmdsim::collectives
