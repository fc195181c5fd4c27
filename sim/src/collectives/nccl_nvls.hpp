// NCCL's NVLS (NVLink SHARP) all-reduce inside one node and NVLSTree across nodes, as pure functions of NCCL
// 2.30.7's figures (docs/collectives.md#nvls, ../shared/REFERENCES.md §1.8 and §2.6): the NVLS graph its
// topology search finds, the bus bandwidth and time its tuner gives, and the plans the `nvls` and `nvls_tree`
// algorithms run on.
#pragma once

#include "collectives/nccl_net_graph.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

// Whether the node's switch reduces (nvlsEfficiency > 0: Hopper and later).
bool has_nvls(const NcclNode& node);
// Whether it also has what NCCL's search across nodes needs for NVLSTree (has_net_graphs).
bool has_nvls_tree(const NcclNode& node);

// The NVLS graph on `local` GPUs of one node (search.cc:1120-1280): one channel per GPU, each pulling from
// every GPU through the switch. A GPU's port carries a channel's speed for every other GPU's channel and
// twice that for its own, so bwIntra is the fastest of the search's speeds with (local + 1) x speed within
// the GPU's NVLink bandwidth; the search's second pass then raises bwInter, which no NVLink path spends, to
// the first speed of at least twice bwIntra, or the fastest. Bandwidths in B/s. Only where has_nvls(node).
NcclGraph nvls_graph(const NcclNode& node, int local);
// The NVLS graph of a group of `local` GPUs on each of `nodes` > 1 nodes (search.cc:1150-1275 with the
// speeds across nodes): each channel's head also sends through its NIC, so the search starts at the fastest
// speed a NIC carries (nccl_nic_speed), lowers it until (local + 1) x speed fits the NVLink bandwidth
// (bwIntra = bwInter = that speed), then raises bwInter while below twice bwIntra and within the NIC.
NcclGraph nvls_graph(const NcclNode& node, int local, int nodes);

// The tuner's NVLS all-reduce bus bandwidth over `ranks` GPUs of one node (tuning.cc:307-323):
// channels x min(bwIntra x nvlsEfficiency x (channels - 1) / channels x 2, bwInter), B/s.
double nvls_bus_bandwidth(const NcclNode& node, int ranks);

// hwLat NVLink of NVLS with Simple (tuning.cc:161): the tuner's whole latency of NVLS on one node (:424-426).
inline constexpr Seconds kNvlsLatency = 25e-6;

// The tuner's time of an NVLS all-reduce of `bytes` over `ranks` GPUs of one node: latency + bytes / algbw,
// algbw = busbw x ranks / (2 (ranks - 1)).
Seconds nvls_tuner_time(const NcclNode& node, int ranks, double bytes);

// NCCL_NVLS_CHUNKSIZE: the largest chunk of NVLS on one node, every architecture (transport/nvls.cc:160).
inline constexpr double kNvlsChunk = 128 * 1024;
// NVLS's chunk, in bytes, for a call of `bytes` on one node of `ranks` GPUs (enqueue.cc:2258-2275): 128 KiB,
// lowered to 64, 32 and 16 KiB while the call gives each of its concurrent operations (one per CTA and head,
// every GPU a head) fewer than 64, 8 and 2 of them.
double nvls_chunk(const NcclNode& node, int ranks, double bytes);
// The algorithm bandwidth an NVLS call of `bytes` moves at: each CTA moves its chunks one after another, and
// each chunk step waits for its peers' flags, Simple's step latency over NVLink (hwLat, 3.4 us); the tuner's
// bandwidth is what the largest chunk achieves, so a smaller chunk adds that latency per concurrent operation
// for every chunk more: 1 / bw = 1 / tuner's + 3.4 us / (CTAs x ranks) x (1 / chunk - 1 / 128 KiB). The
// tuner's where the node lacks the kernel's CTAs (nvls_ctas).
double nvls_call_algorithm_bandwidth(const NcclNode& node, int ranks, double bytes);
// What filling NVLS's pipeline adds to a call of `bytes`: the first loop (one chunk per CTA and head, or the
// whole call if smaller) passes scatter and the switch before gather has anything to move; it takes that
// loop at the call's pace. 0 where the node lacks the kernel's CTAs.
Seconds nvls_pipeline_fill(const NcclNode& node, int ranks, double bytes);

// How the switch moves a call of `bytes` (Communicator::pipelined_all_reduce): NCCL's latency and the
// pipeline's fill, then the call's algorithm bandwidth as the pace of each rank's array. Without NCCL's NVLS
// figures on the platform, the links alone.
ChannelProtocol nvls_protocol(const Communicator& comm, double bytes);

// NVLSTree over `local` GPUs on each of `nodes` > 1 nodes (tuning.cc:307-323): channels x min(bwIntra x
// nvlsEfficiency x (channels - 1) / channels x 2, bwInter (twice that on 2 nodes: each node sends the other
// half of what it receives), perChMaxNVLSTreeBw), B/s; and its latency (:427-428), NVLS's 25 us inside the
// node plus 2 floor(lg nodes) network hops of 20.9 us.
double nvls_tree_bus_bandwidth(const NcclNode& node, int local, int nodes);
Seconds nvls_tree_latency(int nodes);
// NVLSTree's chunk, in bytes, for a call of `bytes` (enqueue.cc:2276-2286): the node's largest on this many
// nodes, halved down to 32 KiB while the call gives each of its concurrent operations (one per CTA and head,
// the heads being the `local` GPUs) fewer than 32, 16, 4 and then 1 of them.
double nvls_tree_chunk(const NcclNode& node, int local, int nodes, double bytes);
// What filling NVLSTree's pipeline adds to a call of `bytes`, which the tuner's latency leaves out: each
// CTA's loop moves one chunk per head, and the first loop crosses the network up and down the tree of the
// nodes, 2 ceil(lg nodes) times, before every stage is busy; each crossing takes that loop (or the whole
// call, if smaller) at the call's pace. 0 where the node lacks the kernel's figures.
Seconds nvls_tree_pipeline_fill(const NcclNode& node, int local, int nodes, double bytes);
// The tuner's time of an NVLSTree all-reduce of `bytes`: latency + bytes / algbw, algbw = busbw x ranks /
// (2 (ranks - 1)), times the tree correction per size where the node says so (nvls_tree_size_correction).
Seconds nvls_tree_tuner_time(const NcclNode& node, int local, int nodes, double bytes);
// How `nvls_tree` moves a call of `bytes`: the tuner's latency and its pipeline's fill, then the tuner's
// algorithm bandwidth; without NCCL's NVLS figures on the platform, the links alone. comm's dimensions are
// {local, nodes}.
ChannelProtocol nvls_tree_protocol(const Communicator& comm, double bytes);

}  // namespace spmdsim::collectives
