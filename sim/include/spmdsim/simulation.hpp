// Simulation: owns the SimGrid engine (one per process: SimGrid's clock is per process), the platform, the
// devices' memory ledgers and the report. Simulated time runs on across calls: a sequence of pmap calls
// (a training loop) is one timeline.
#pragma once

#include <map>
#include <memory>
#include <string>
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
  // SimGrid settings ("network/model:CM02", ...), applied before the platform is built.
  std::vector<std::string> simgrid_config;
  // The algorithm of each collective kind ("auto": the lowest predicted time per call); a kind left out
  // uses default_algorithm().
  std::map<CollectiveKind, std::string> algorithms;
  // Pieces a pipelining algorithm cuts each message into.
  int pipeline_chunks = 1;
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
};

// The settings under which SimGrid's network follows the textbook alpha-beta model exactly: no TCP
// factors (CM02), no reverse cross-traffic, no TCP window cap, and the full max-min solve (SimGrid 3.32's
// lazy update drops a flow's other link bounds when its window cap is 0; docs/platforms.md).
std::vector<std::string> alpha_beta_config();

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

  // The host reads pmap results: the device shards of every array in `tree` not yet read travel
  // device->host over the host links (in simulated time); the returned arrays are host arrays.
  Tree device_get(const Tree& tree);

  // Everything so far: per call and per device times, memory peaks.
  SimulationReport report() const;

  detail::Runtime& runtime() { return *runtime_; }

 private:
  std::unique_ptr<detail::Runtime> runtime_;
};

}  // namespace spmdsim
