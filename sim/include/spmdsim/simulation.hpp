// Simulation: owns the SimGrid engine (one per process: SimGrid's clock is per process), the platform, the
// devices' memory ledgers and the report. Simulated time runs on across calls: a sequence of pmap calls
// (a training loop) is one timeline.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/pytree.hpp"
#include "spmdsim/report.hpp"

namespace spmdsim {

namespace detail {
class Runtime;
}

struct SimulationOptions {
  // SimGrid settings ("network/model:CM02", ...), applied before the platform is built, over the command
  // line's --cfg and the platform's own network settings (PlatformBuilder::network_config).
  std::vector<std::string> simgrid_config;
  // The algorithm of each collective kind ("auto": the lowest predicted time per call); a kind left out
  // uses default_algorithm(kind, collective_library(platform)): for the all-reduce, all-gather and
  // reduce-scatter `nccl` on a platform of NVIDIA GPU nodes (Platform::nccl), as NCCL runs them there,
  // `nccl_ring` over full-mesh nodes (Platform::full_mesh_nodes), as RCCL runs them on MI300X, and
  // `torus` on a torus (Platform::torus), as JAX runs them on TPU slices.
  std::map<CollectiveKind, std::string> algorithms;
  // Pieces a pipelining algorithm cuts each message into.
  int pipeline_chunks = 1;
  // Channels a channel-parallel algorithm (nccl_ring) spreads its data over; 0: NCCL's ring channels on a
  // platform with NCCL's figures (Platform::nccl; a call runs on fewer when its size earns fewer), else over
  // full-mesh nodes mesh_ring_channels (one per arc-disjoint cycle inside a node, as many on every NIC and
  // cycle across nodes), else one per device of a node when the group spans several nodes (every NIC of a
  // node carries a ring), else 1.
  int channels = 0;
  // nccl_ring's protocol where the platform has NCCL's figures: "LL", "LL128" or "Simple" (NCCL_PROTO);
  // empty: the one NCCL's tuner picks for each call's size (docs/collectives.md#protocols).
  std::string protocol;
  // What the multidim all-reduce runs along each dimension of the platform (dimension_algorithm_names());
  // empty: ring along every one.
  std::vector<std::string> dimension_algorithms;
  // A ring phase (p-1 exchanges with the same two neighbours) moves as one transfer each way plus the other
  // messages' latencies, instead of p-1 messages: p = 512 in a fraction of a second instead of minutes.
  // Exact under alpha_beta_config() when every piece has the same size and no other traffic shares the
  // ring's links (docs/performance.md#aggregated-phases). On abstract data every ring algorithm aggregates;
  // on real data the flat ring all-reduce (psum, pmean, pmax, pmin) does too, its values computed once for
  // the group in the per-message ring's order (bit for bit the same) and shared by every device; real
  // all-gathers, reduce-scatters and the hierarchical and multi-dimensional all-reduces move per message.
  // (Called aggregate_abstract_phases before real all-reduces were aggregated.)
  bool aggregate_ring_phases = false;
  // jax_enable_x64. On (spmdsim's default: a C++ program asks for float64 by name, where numpy hands JAX
  // float64 by default), float64 arrays stay float64 on the devices. Off (JAX's default), float64 arrays
  // become float32 as they reach the devices (pmap's inputs, device_put_*), as JAX canonicalises them, and
  // everything computed from them is float32 (docs/collectives.md#dtypes).
  bool enable_x64 = true;
  // Whether fused() runs its body as one kernel (XLA's fusion of elementwise chains and their reductions);
  // off, every op inside is its own kernel, to see the unfused cost. Fused attention stays one kernel.
  bool fusion = true;
  // Whether every device keeps its timelines: each compute, communication and transfer span and each memory
  // event, what traces, the JSON report's spans and memory_timelines and memory plots are made of. Off, a
  // run keeps only the totals and peaks (report tables, device_totals, memory): an abstract training step of
  // a large model keeps a third less host memory per device (docs/scale.md).
  bool timelines = true;
};

// The settings under which SimGrid's network follows the textbook alpha-beta model exactly: no TCP
// factors (CM02), no reverse cross-traffic, no TCP window cap, and the full max-min solve (SimGrid 3.32's
// lazy update drops a flow's other link bounds when its window cap is 0; docs/platforms.md).
std::vector<std::string> alpha_beta_config();

// The network settings SimGrid has in force (network/model, network/crosstraffic, network/TCP-gamma,
// network/optim) as (name, value) pairs, read back once a Simulation has applied its settings and the
// command line's --cfg; a setting SimGrid does not know is left out.
std::vector<std::pair<std::string, std::string>> simgrid_network_settings();

class Simulation {
 public:
  explicit Simulation(const PlatformBuilder& builder, SimulationOptions options = {});
  // Lets SimGrid consume its --cfg=... and --log=... arguments from argv first.
  Simulation(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;  // owns the process's one SimGrid engine
  Simulation& operator=(const Simulation&) = delete;

  int num_devices() const;
  const Platform& platform() const;
  Seconds now() const;
  const std::string& algorithm(CollectiveKind kind) const;

  // The host starts copying `tree` to devices and goes on at once, as jax.device_put_sharded does: every
  // leaf's leading axis is split over `devices` (by default the first leading-size devices), entry i to the
  // i-th device, as pmap's in_axes 0 splits it. Returns the same values as device-resident arrays (as pmap
  // results are) without advancing the clock; a pmap over these devices with in_axes 0 uses them in place,
  // each device waiting only for its own shards to arrive. The shards take device memory (input_shards)
  // from now until the returned arrays go away. Each device's copies run one after another in the order
  // they were put, each one's leaves together over the device's host links (README.md, "Host transfers").
  // Throws ValueError for no leaf, a leaf without a leading axis, leading axes of different sizes, or
  // devices that do not match them; OutOfMemoryError when a shard does not fit.
  Tree device_put_sharded(const Tree& tree, std::optional<std::vector<int>> devices = std::nullopt);
  // The same with a full copy of every leaf on each of `devices` (replicated_args), as
  // jax.device_put_replicated; a pmap over these devices with in_axes None uses them in place.
  Tree device_put_replicated(const Tree& tree, const std::vector<int>& devices);

  // The host reads pmap results: the device shards of every array in `tree` not yet read travel
  // device->host over the host links (in simulated time); the returned arrays are host arrays. A put's shards
  // still on their way to a device are waited for first.
  Tree device_get(const Tree& tree);

  // Everything so far: per call and per device times, memory peaks.
  SimulationReport report() const;

  detail::Runtime& runtime() { return *runtime_; }

 private:
  std::unique_ptr<detail::Runtime> runtime_;
};

}  // namespace spmdsim
