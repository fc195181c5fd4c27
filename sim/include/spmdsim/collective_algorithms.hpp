// Collective algorithms: one file each (sim/src/collectives/), one signature per collective kind, all
// registered by name with a one-line description in sim/src/collectives/registry.cpp. An algorithm is
// straight-line code over the few verbs of Communicator; it never sees hosts or links.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

enum class ReduceOp { sum, max, min };

// How a channel moves its data: NCCL's protocol (LL, LL128, Simple; docs/collectives.md#protocols) as the
// channel's communicator carries it out. The default moves chunks as they are, at the links' rates.
struct ChannelProtocol {
  double wire_bytes_per_byte = 1;    // bytes on the wire per byte of data: LL 2 (a flag per data word)
  double rate = 0;                   // bytes of data per second one channel moves at most; 0: no cap
  Seconds start_latency = 0;         // once per collective, before the channels start (NCCL's baseLat)
  Seconds step_overhead = 0;         // per message inside a node, over the route's own latency
  Seconds step_overhead_across = 0;  // per message to a device of another node
  // Slices a message moves in, each forwarded as it arrives (NCCL's Simple: 2), so that a step's overhead
  // hides behind the transfer of the slices after the first, at `rate`.
  int slices = 1;
  bool reduces_in_flight = false;  // reductions take no time of their own: the channel's rate includes them

  // How much of a step's overhead a message of `bytes` hides behind its slices after the first: a step
  // takes a slice's time plus the longer of the other slices' and its overhead.
  Seconds hidden_by_slices(double bytes) const {
    return slices <= 1 || rate <= 0 ? 0 : (slices - 1.0) / slices * bytes / rate;
  }
};

// The reduced values of every rank's 1-d input (flats[r], one shape and dtype for all), in the order of an
// algorithm's floating-point operations.
using ReductionValues = Array (*)(const std::vector<Array>& flats, ReduceOp op);

// The rings of a channel-parallel algorithm: ring c lists every rank of a communicator in channel c's order.
using ChannelRings = std::vector<std::vector<int>>;

// One device's end of a collective over a group of devices, ranks 0..size()-1 in group order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts sending chunk to peer; the collective does not end before the send has completed.
  virtual void send(int peer, const Array& chunk) = 0;
  // Sends chunk to peer and returns once it has arrived: MPI's blocking send of a large message, which
  // tree algorithms use so that a rank's sends to its children follow one another instead of sharing its
  // link.
  virtual void send_and_wait(int peer, const Array& chunk) = 0;
  virtual Array recv(int peer) = 0;
  // Sends to `to` and receives from `from` at the same time (both transfers posted before waiting).
  virtual Array sendrecv(int to, const Array& chunk, int from) = 0;
  // sendrecv of a piece the caller knows is shaped like `expected`. On abstract data with
  // SimulationOptions::aggregate_ring_phases, consecutive such exchanges with the same two peers (a ring
  // phase) are simulated as one transfer each way; the caller need not know which happens.
  virtual Array sendrecv_shaped(int to, const Array& chunk, int from, const Array& expected) = 0;
  // a op b elementwise, taking this device's time for it (the gamma term of the cost model).
  virtual Array combine(const Array& a, const Array& b, ReduceOp op) = 0;
  // sendrecv_shaped and combine as NCCL's ring all-reduce runs them (runRing in src/device/all_reduce.h:
  // directRecvReduceDirectSend, directRecvCopyDirectSend): what arrives lands in the channel's fixed staging
  // buffers (its FIFO) and is reduced or copied on its way to the next rank or into the call's output, so
  // neither the piece received nor the reduced one is a device buffer of its own; the caller holds the
  // output (hold_scratch).
  virtual Array sendrecv_staged(int to, const Array& chunk, int from, const Array& expected) = 0;
  virtual Array combine_staged(const Array& a, const Array& b, ReduceOp op) = 0;

  // How many pieces a pipelining algorithm cuts its message into (1: none). A property of the call, set
  // apart from the algorithm, as NCCL sets its protocol apart.
  virtual int pipeline_chunks() const = 0;
  // The logical shape of the group (mixed radix, dimension 0 varying fastest; product == size()), for
  // hierarchical and multi-dimensional algorithms: {devices per node, nodes} or a torus's {X, Y, Z}.
  virtual std::vector<int> dimensions() const = 0;
  // What multidim runs along each of dimensions(): one name of dimension_algorithm_names() per dimension.
  virtual std::vector<std::string> dimension_algorithms() const = 0;
  // The communicator of `members` (ranks of this one, in their new order); this rank must be a member.
  virtual std::unique_ptr<Communicator> subgroup(std::vector<int> members) = 0;

  // How many channels a channel-parallel algorithm spreads its data over (NCCL's nChannels), a property of
  // the call as pipeline_chunks is.
  virtual int channels() const = 0;
  // Runs body(ring_comm, c) for every c at once, ring_comm being the communicator of rings[c] (every rank
  // of this one, in ring c's order) whose messages are its own: NCCL's channels, each its own CUDA block
  // with its own connections, so that a device has several sends and receives in flight. Returns when every
  // body has returned and its sends have arrived.
  // Each channel moves its messages as `protocol` says.
  // The rings are shared (ChannelRings), so that the devices of a call can share what they build on them.
  virtual void in_parallel(const std::shared_ptr<const ChannelRings>& rings, const ChannelProtocol& protocol,
                           const std::function<void(Communicator&, int)>& body) = 0;

  // Phase booking (SimulationOptions::aggregate_ring_phases, docs/performance.md#aggregated-phases): a
  // collective call runs on one of two backends behind these same verbs. The per-message one simulates every
  // message; the phase-booking one also lets an algorithm that knows the totals of a run of exchanges with
  // the same two peers book them instead of sending them one by one, and simulates the run as one transfer
  // each way, the latencies of its other messages, then the reductions done meanwhile. Whether this
  // communicator is the phase-booking one:
  virtual bool books_phases() const = 0;
  // Whether x's exchanges are booked: the phase-booking backend and x abstract (real data's values need their
  // messages, unless an algorithm computes them once for the group: booked_values).
  bool books(const Array& x) const { return books_phases() && x.is_abstract(); }
  // Books `messages` exchanges that send bytes_out in all to `to`, receive as much from `from` and spend
  // `reducing` in reductions, as that many sendrecv_shaped and combine calls would. Only where
  // books_phases(): the per-message backend throws std::logic_error.
  virtual void book_phase(int to, int from, Bytes bytes_out, int messages, Seconds reducing) = 0;
  // The time combine takes for a piece shaped like `piece`, inside the collective.
  virtual Seconds reduction_time(const Array& piece, ReduceOp op) const = 0;
  // A buffer shaped like `like` (abstract) in this device's memory as collective scratch, held as long as
  // the returned array is: what a booked run holds where its exchanges would have held it.
  virtual Array hold_scratch(const Array& like) = 0;
  // in_parallel for bodies that only book (book_phase, hold_scratch): every channel's run is booked on this
  // device's one actor, then all of them are simulated at once, each with its protocol and timeline as its
  // own actor would have had them, without an actor per channel. Only where books_phases(), as book_phase.
  virtual void book_in_parallel(const std::shared_ptr<const ChannelRings>& rings,
                                const ChannelProtocol& protocol,
                                const std::function<void(Communicator&, int)>& body) = 0;
  // The values of an all-reduce whose run is booked from its totals instead of walked (Algorithm::booked):
  // computed once for the whole group, `values` giving the order of the algorithm's floating-point
  // operations, while this rank runs `book`; returned once the booked run has been simulated. On abstract
  // data only `book` runs, and the result is shaped like flat.
  virtual Array booked_values(const Array& flat, ReduceOp op, ReductionValues values,
                              const std::function<void()>& book) = 0;
  // NCCL's figures for the platform's nodes, or nullptr where the platform has none (Platform::nccl).
  virtual const NcclNode* nccl_node() const = 0;
  // RCCL's figures for the platform's nodes, or nullptr where the platform has none (Platform::rccl).
  virtual const RcclNode* rccl_node() const = 0;
  // The protocol the call asks for (CollectiveOptions::protocol): "LL", "LL128", "Simple", or empty for the
  // one NCCL's tuner picks.
  virtual const std::string& protocol() const = 0;

  // NVLink SHARP (NCCL's NVLS): whether every rank is on one node whose switch reduces in the network
  // (PlatformDevice::reducing_switch).
  virtual bool switch_reduces() const = 0;
  // Whether the group spans several nodes whose switches reduce, dimensions() being {ranks per node,
  // nodes} and the ranks of each block of dimensions()[0] sharing one such switch (NVLSTree).
  virtual bool node_switches_reduce() const = 0;
  // Whether dimensions() lie along the lines of a mesh, which do not wrap around: the platform is a mesh
  // (Platform::torus without torus_wraparound) or the group a part of a torus, so a ring along a dimension
  // closes over the links of the other way.
  virtual bool dimensions_are_mesh_lines() const = 0;
  // What one rank of a pipelined all-reduce moves (NVLS, NVLSTree, NCCL's Tree): bytes through its node's
  // reducing switch, each way, and its exchanges with other ranks.
  struct Exchange {
    int peer = 0;        // a rank of this communicator
    Bytes sends = 0;     // bytes to it
    Bytes receives = 0;  // bytes from it
  };
  struct PipelinedTraffic {
    Bytes switch_each_way = 0;  // up to and down from the node's reducing switch; only where it has one
    std::vector<Exchange> exchanges;
  };
  // An all-reduce whose stages are pipelined chunk by chunk, so that all of a rank's traffic moves at once:
  // NVLS (each rank reads its slice of the vector reduced by the switch from every rank of its node with a
  // multimem load-reduce and writes it back to every rank at once with a multimem store), NVLSTree (the same,
  // the slices crossing nodes up and down a tree) and NCCL's Tree (chains inside nodes, a tree across them).
  // Starts when the last rank has arrived (the switch, and a tree's root, need every rank's part): the
  // protocol's start latency, then `traffic`, the array moving at most at protocol.rate (wire bytes are
  // traffic x protocol.wire_bytes_per_byte). The values are the ranks' arrays reduced in rank order.
  virtual Array pipelined_all_reduce(const Array& flat, ReduceOp op, const ChannelProtocol& protocol,
                                     const PipelinedTraffic& traffic) = 0;
};

// The collective kinds an algorithm can implement, with the JAX primitives they serve.
enum class CollectiveKind {
  all_reduce,      // psum, pmean, pmax, pmin: a flat array in, the reduced flat array out
  all_gather,      // all_gather: my piece in, every rank's piece out (rank order)
  reduce_scatter,  // psum_scatter: size() blocks in, my reduced block out
  all_to_all,      // all_to_all: block j for rank j in, block from rank j at j out
  broadcast,       // the root's flat array to every rank (tree algorithms and sweeps need it)
  reduce,          // every rank's flat array reduced at the root
};
inline constexpr CollectiveKind kAllCollectiveKinds[] = {
    CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
    CollectiveKind::all_to_all, CollectiveKind::broadcast,  CollectiveKind::reduce};
std::string_view collective_kind_name(CollectiveKind kind);
// Accepts the names collective_kind_name gives; throws ValueError listing them otherwise.
CollectiveKind parse_collective_kind(std::string_view name);

using AllReduceFn = Array (*)(Communicator&, const Array& flat, ReduceOp);
using AllGatherFn = std::vector<Array> (*)(Communicator&, const Array& mine);
using ReduceScatterFn = Array (*)(Communicator&, const std::vector<Array>& blocks, ReduceOp);
using AllToAllFn = std::vector<Array> (*)(Communicator&, const std::vector<Array>& blocks);
// `flat` has the message's shape on every rank; only the root's values matter.
using BroadcastFn = Array (*)(Communicator&, const Array& flat, int root);
// The result is meaningful at the root only.
using ReduceFn = Array (*)(Communicator&, const Array& flat, ReduceOp, int root);

// The alpha-beta-gamma model of one collective: p ranks, n bytes (the all-reduce vector; the gathered
// total for all-gather and reduce-scatter; what one rank sends in all for all-to-all), alpha seconds per
// message, beta seconds per byte sent, gamma seconds per byte reduced.
struct CostInputs {
  int p = 1;
  double n = 0;
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
};

// An algorithm's run booked from its totals in O(1) per rank, for the phase-booking backend
// (Communicator::books_phases): the same times and memory as its run walked exchange by exchange there
// (tests/aggregated_phases_test.cpp), without the p pieces or messages per rank the walk goes through.
// The all-reduce's is booked on any data, its values from Communicator::booked_values; the all-gather's and
// reduce-scatter's on abstract data only (Communicator::books).
using BookedAllReduceFn = AllReduceFn;
// My piece in (abstract); the other ranks' pieces out, as the collective scratch the walk holds them in.
using BookedAllGatherFn = Array (*)(Communicator&, const Array& mine);
// The joined block every rank reduces (abstract); my reduced block out, as the scratch the walk holds it in.
using BookedReduceScatterFn = Array (*)(Communicator&, const Array& block, ReduceOp);

template <class Fn, class BookedFn = std::nullptr_t>
struct Algorithm {
  std::string_view name;
  std::string_view description;
  Fn run;
  // Its published closed-form time (source in the algorithm's file), for the auto policy and the tests.
  double (*cost)(const CostInputs&);
  // Whether it runs on p ranks; the registry's error says which counts it accepts.
  bool (*accepts)(int p);
  std::string_view accepted_counts;  // e.g. "powers of two"
  // Whether it runs only where the platform carries what it needs: a switch that reduces in the network
  // (Communicator::switch_reduces: nvls, nvls_tree) or NCCL's figures (Communicator::nccl_node: nccl_tree).
  // auto never picks it, since its cost is not comparable on platforms without them.
  bool platform_bound = false;
  // Its booked run, or nullptr where the phase-booking backend walks it exchange by exchange.
  BookedFn booked = nullptr;
};
using AllReduceAlgorithm = Algorithm<AllReduceFn, BookedAllReduceFn>;
using AllGatherAlgorithm = Algorithm<AllGatherFn, BookedAllGatherFn>;
using ReduceScatterAlgorithm = Algorithm<ReduceScatterFn, BookedReduceScatterFn>;

// For algorithms that run on any number of ranks.
inline bool any_count(int) {
  return true;
}
inline bool power_of_two(int p) {
  return p > 0 && (p & (p - 1)) == 0;
}

std::span<const AllReduceAlgorithm> all_reduce_algorithms();
std::span<const AllGatherAlgorithm> all_gather_algorithms();
std::span<const ReduceScatterAlgorithm> reduce_scatter_algorithms();
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms();

// The algorithm names of a kind, in registry order.
std::vector<std::string_view> algorithm_names(CollectiveKind kind);
// The default algorithm of a kind (ring for reductions and all-gather, pairwise for all-to-all).
std::string_view default_algorithm(CollectiveKind kind);
// What runs a platform's all-reduce, all-gather and reduce-scatter when no algorithm is named: NCCL on NVIDIA
// GPU nodes (Platform::nccl), RCCL on AMD GPU nodes (Platform::rccl: its MSCCL programs and its rings over
// the mesh's links), channel rings over the pair links of other full-mesh nodes (Platform::full_mesh_nodes),
// rings both ways along every dimension of a torus (Platform::torus: JAX's collectives on TPU slices),
// spmdsim's textbook algorithms elsewhere.
enum class CollectiveLibrary { textbook, nccl, rccl, mesh_channel_rings, torus_rings };
CollectiveLibrary collective_library(const Platform& platform);
// The default on a platform: for the all-reduce, all-gather and reduce-scatter `nccl` under NCCL and RCCL,
// `nccl_ring` over a mesh (its channels then default to mesh_ring_channels, as RCCL's rings' do), `torus` on
// a torus; else default_algorithm(kind).
std::string_view default_algorithm(CollectiveKind kind, CollectiveLibrary library);
// The channels nccl_ring runs on by default over full-mesh nodes of d devices: on one node one per
// arc-disjoint Hamiltonian cycle nccl_channel_rings finds (7 for 8, 2 for 4); across nodes the least multiple
// of both d and the cycles, so that every NIC and every cycle carries as many channels (56 for 8, as RCCL
// duplicates its rings up to 64 channels), or d where that passes NCCL's 64.
int mesh_ring_channels(int devices_per_node, int nodes = 1);
// The channels nccl_ring runs on by default for a group of `nodes` nodes of `devices_per_node` devices each:
// NCCL's where the platform has NCCL's figures (`nccl`: its ring channels inside a node, each channel of its
// graph across nodes twice), else over full-mesh nodes mesh_ring_channels, else one per device of a node
// across nodes (every NIC of a node carries a ring), else 1. The one policy of a call's channels and of the
// commands' estimate of them before a run.
int default_ring_channels(const NcclNode* nccl, bool full_mesh_nodes, int devices_per_node, int nodes);
// default_ring_channels for a group of the platform's devices shaped `dimensions` ({devices per node, nodes}
// or flat): what a call over that group runs on when the simulation sets no channel count.
int group_ring_channels(const Platform& platform, const std::vector<int>& dimensions);
// Throws ValueError "unknown all_reduce algorithm 'x'; valid: ring, ..." for a name not registered.
void check_algorithm(CollectiveKind kind, std::string_view name);

const AllReduceAlgorithm& find_all_reduce(std::string_view name);
const AllGatherAlgorithm& find_all_gather(std::string_view name);
const ReduceScatterAlgorithm& find_reduce_scatter(std::string_view name);
const Algorithm<AllToAllFn>& find_all_to_all(std::string_view name);
const Algorithm<BroadcastFn>& find_broadcast(std::string_view name);
const Algorithm<ReduceFn>& find_reduce(std::string_view name);
std::span<const Algorithm<BroadcastFn>> broadcast_algorithms();
std::span<const Algorithm<ReduceFn>> reduce_algorithms();

// Throws ValueError "<kind> algorithm '<name>' runs on <accepted counts>, not on <p> devices" when the
// algorithm refuses p.
void check_device_count(CollectiveKind kind, std::string_view name, int p);

// NCCL's protocol names, as NCCL_PROTO takes them: LL, LL128, Simple.
std::span<const std::string_view> nccl_protocol_names();

// What `nccl_ring` or `nccl` runs a call on where the platform has NCCL's figures, as NCCL_DEBUG=INFO prints
// it (docs/collectives.md#protocols, #nvls): NCCL's algorithm ("Ring", or where `nccl` finds it faster by
// NCCL's tuner for an all-reduce whose nodes' switches reduce, `switches_reduce`: "NVLS" on one node,
// "NVLSTree" across nodes), the protocol (the tuner's for the size, or `protocol` when given) and the
// channels (a ring's: those the size earns, at most `max_channels`; NVLS's and NVLSTree's: their CTAs,
// nccl_nvls_ctas). `dimensions` is the group's shape ({devices per node, nodes}), elements_per_rank what each
// rank contributes (all-reduce: its vector / p; all-gather: its piece; reduce-scatter: one block). Throws
// ValueError for an unknown protocol or algorithm.
struct NcclChoice {
  std::string algorithm;  // "Ring", "Tree", "NVLS", "NVLSTree", "MSCCL"
  std::string protocol;   // "LL", "LL128", "Simple"
  int channels = 1;
};
NcclChoice nccl_choice(const NcclNode& node, std::string_view algorithm, CollectiveKind kind,
                       const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                       std::int64_t itemsize, int max_channels, const std::string& protocol,
                       bool switches_reduce);
// The CTAs NCCL runs NVLS (`nodes` 1) or NVLSTree (more) on over `local` GPUs per node, as NCCL_DEBUG prints
// them (NcclNode::nvls_ctas, nvls_tree_ctas); the NVLS graph's channels where the node lacks those figures.
int nccl_nvls_ctas(const NcclNode& node, int local, int nodes);

// NCCL's ring and tree graphs for a group of `local` GPUs on each of `nodes` nodes as its search leaves them
// (docs/collectives.md#channels-across-nodes), and the channels its Ring and Tree calls run on.
struct NcclNetGraphs {
  int call_channels = 0;   // comm->nChannels: across nodes each graph channel twice
  int graph_channels = 0;  // the ring's and the tree's
  double ring_speed = 0;   // per graph channel, B/s (bwIntra = bwInter)
  double tree_intra = 0;   // the tree's bwIntra, B/s: what NCCL's tuner reads on 2 nodes
  double tree_inter = 0;   // the tree's bwInter, B/s: what it reads on more
};
NcclNetGraphs nccl_net_graphs(const NcclNode& node, int local, int nodes);

// What `nccl_ring` or `nccl` runs a call on where RCCL drives the nodes (Platform::rccl): for `nccl`'s
// all-reduce, "MSCCL" where one of RCCL's MSCCL programs covers it (elements_per_rank x ranks elements; its
// protocol and channels, whatever `protocol` says, as RCCL's programs fix theirs: docs/collectives.md#msccl);
// else "Ring", RCCL's tuner's protocol for the size (or `protocol` when given; ValueError for LL128, which
// RCCL runs on gfx90a only) and the channels, at most `max_channels` and one per element. Arguments as
// nccl_choice's.
NcclChoice rccl_choice(const RcclNode& node, std::string_view algorithm, CollectiveKind kind,
                       const std::vector<int>& dimensions, std::int64_t elements_per_rank,
                       std::int64_t itemsize, int max_channels, const std::string& protocol);

// What the multidim all-reduce can run along one dimension, as ASTRA-sim names them: a reduce-scatter on
// the way out and the matching all-gather on the way back.
struct DimensionAlgorithm {
  std::string_view name;
  std::string_view reduce_scatter;  // a registered reduce_scatter algorithm
  std::string_view all_gather;      // a registered all_gather algorithm
};
std::span<const DimensionAlgorithm> dimension_algorithms();
std::vector<std::string_view> dimension_algorithm_names();
// Throws ValueError for a name not in dimension_algorithms() (listing them), a count other than the
// number of dimensions, or an algorithm refusing its dimension's extent.
void check_dimension_algorithms(const std::vector<std::string>& names, const std::vector<int>& dimensions);

}  // namespace spmdsim
