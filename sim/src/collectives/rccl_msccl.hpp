// RCCL's MSCCL all-reduce programs for 8 GPUs of one node (docs/collectives.md#msccl), as pure functions of
// RCCL's algorithm files: which program runs a call, and how that call moves. On a node whose topology
// enables MSCCL (the 8 x MI300X xGMI models of src/graph/rome_models.cc, "mscclEnabled=1"), RCCL runs an
// all-reduce of 8 ranks with an MSCCL program wherever one of its files covers the call, before its tuner
// looks at Ring or Tree. The files installed for it are all-pairs programs: every rank sends each other rank
// its shard of the vector and reduces the shards it receives, then sends its reduced shard to every other
// rank; both steps use all 7 of a GPU's links at once.
#pragma once

#include <cstdint>
#include <optional>

#include "collectives/nccl_protocols.hpp"

namespace spmdsim::collectives {

// One of RCCL's out-of-place all-pairs all-reduce programs for 8 ranks (tools/msccl-algorithms/
// allreduce-allpairs-8n-*-op.xml: the <algo> element's attributes).
struct MscclProgram {
  NcclProtocol protocol;         // proto
  int channels;                  // nchannels
  std::int64_t chunks_per_loop;  // nchunksperloop: the call's element count must be a multiple of it
  double min_bytes;              // minBytes
  double max_bytes;              // maxBytes
};

// The ranks every program is written for (ngpus), and its steps: a rank's shards go out to be reduced, then
// its reduced shard goes out to every rank.
inline constexpr int kMscclRanks = 8;
inline constexpr int kMscclAllPairsSteps = 2;

// The program RCCL runs an all-reduce of `elements` elements, `bytes` in all, over `ranks` ranks on `nodes`
// nodes of `node` with (msccl_lifecycle.cc, mscclInternalSchedulerSelectAlgo: the size within the file's
// range, the count a multiple of its chunks per loop, its ranks the communicator's), or nullopt where RCCL
// runs none and its tuner picks instead, or where `node` has no MSCCL figure (msccl_channel_bandwidth 0).
std::optional<MscclProgram> msccl_all_reduce_program(const RcclNode& node, int ranks, int nodes,
                                                     std::int64_t elements, double bytes);

// How a call of `program` moves on `node`: the protocol's wire bytes, `program.channels` channels of
// RcclNode::msccl_channel_bandwidth each (the reductions inside them), after RCCL's latency for two steps of
// the protocol (base latency + 2 x step latency, rccl_protocol_figures).
ChannelProtocol msccl_channel_protocol(const RcclNode& node, const MscclProgram& program);

}  // namespace spmdsim::collectives
