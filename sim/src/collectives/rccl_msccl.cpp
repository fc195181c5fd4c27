// Sources, ROCm/rccl commit 0cbce2a7 (2024-10-24), read for docs/collectives.md#msccl:
// - the programs: tools/msccl-algorithms/allreduce-allpairs-8n-ll-32tb-op.xml (LL, 4 channels, 256 chunks per
//   loop, 0 to 65536 bytes), -ll-64tb-op.xml (LL, 8 channels, 512 chunks, 65537 to 524287) and -simple-op.xml
//   (Simple, 8 channels, 512 chunks, 524288 to 16777216), the out-of-place ones, as a JAX psum's output is a
//   new buffer; each step of them sends one rank a chunk of the shard it reduces (the "allreduce_pairs"
//   schedules);
// - the selection: src/misc/msccl/msccl_lifecycle.cc:329-345 (count > 0, count a multiple of nchunksperloop,
//   minBytes <= bytes <= maxBytes, nRanks the communicator's) and :350-358 (only where the topology enables
//   MSCCL: src/graph/rome_models.cc rome_model_79 and its like, 8 MI300X over 7 xGMI links,
//   "mscclEnabled=1");
// - the latencies: RCCL's own per protocol (rccl_protocols.cpp), for the programs' two steps.
#include "collectives/rccl_msccl.hpp"

#include <array>

#include "collectives/rccl_protocols.hpp"

namespace spmdsim::collectives {
namespace {

constexpr std::array kPrograms{
    MscclProgram{NcclProtocol::ll, 4, 256, 0, 65536},
    MscclProgram{NcclProtocol::ll, 8, 512, 65537, 524287},
    MscclProgram{NcclProtocol::simple, 8, 512, 524288, 16777216},
};

}  // namespace

std::optional<MscclProgram> msccl_all_reduce_program(const RcclNode& node, int ranks, int nodes,
                                                     std::int64_t elements, double bytes) {
  if (node.msccl_channel_bandwidth <= 0 || ranks != kMscclRanks || nodes != 1 || elements <= 0)
    return std::nullopt;
  for (const MscclProgram& program : kPrograms)
    if (elements % program.chunks_per_loop == 0 && bytes >= program.min_bytes && bytes <= program.max_bytes)
      return program;
  return std::nullopt;
}

ChannelProtocol msccl_channel_protocol(const RcclNode& node, const MscclProgram& program) {
  const auto& figures = rccl_protocol_figures(program.protocol);
  return {
      .wire_bytes_per_byte = figures.wire_bytes_per_byte,
      .rate = program.channels * node.msccl_channel_bandwidth,
      .start_latency = figures.base_latency + kMscclAllPairsSteps * figures.step_latency,
      .reduces_in_flight = true,
  };
}

}  // namespace spmdsim::collectives
