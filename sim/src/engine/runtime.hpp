// The state behind a Simulation: the SimGrid engine, the platform, the devices' ledgers, the network
// endpoints and the report. pmap, the collectives and device_get work on it.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "engine/host_copies.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/report.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::detail {

class Runtime {
 public:
  Runtime(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;  // owns the engine
  Runtime& operator=(const Runtime&) = delete;

  const Platform& platform() const { return platform_; }
  int num_devices() const { return static_cast<int>(platform_.devices.size()); }
  // ValueError, prefixed with `what`, for a device index outside the platform or one listed twice.
  void check_devices(const std::vector<int>& devices, std::string_view what) const;
  const std::shared_ptr<MemoryLedger>& ledger(int device) const { return ledgers_.at(device); }
  const std::string& algorithm(CollectiveKind kind) const { return algorithms_.at(kind); }
  const std::map<CollectiveKind, std::string>& algorithms() const { return algorithms_; }
  const std::vector<std::string>& config() const { return config_; }
  int pipeline_chunks() const { return pipeline_chunks_; }
  const std::vector<std::string>& dimension_algorithms() const { return dimension_algorithms_; }
  bool aggregate_ring_phases() const { return aggregate_ring_phases_; }

  // The channel from one device to another. Messages between one ordered pair are matched in the order
  // both sides post them, which is SPMD program order, so a fast sender can never be received early. The
  // communication streams (async_collectives.hpp) have channels of their own, matched in the streams' order.
  simgrid::s4u::Mailbox* channel(int from, int to, Track track = Track::program);
  // The latency one message from device `from` to device `to` pays: its route's, times the network
  // model's latency factor.
  Seconds message_latency(int from, int to);

  // The host's asynchronous copies to the devices.
  HostCopyQueue& host_copies() { return host_copies_; }

  // Runs the actors created since the last run to completion. If one failed, the first failure is
  // rethrown here (the failing actor kills the others so that none waits forever). Host copies still in
  // flight when the others are done stay in flight: the run ends without waiting for them.
  void run();
  // Called by a failing actor.
  void fail(std::exception_ptr error);
  // Called when any actor ends.
  void actor_ended(aid_t actor);

  void add_call(CallReport call);
  SimulationReport report() const;

 private:
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<std::string> config_;
  Platform platform_;
  std::vector<std::shared_ptr<MemoryLedger>> ledgers_;
  std::map<CollectiveKind, std::string> algorithms_;
  int pipeline_chunks_ = 1;
  std::vector<std::string> dimension_algorithms_;
  bool aggregate_ring_phases_ = false;
  std::map<std::tuple<int, int, Track>, simgrid::s4u::Mailbox*> channels_;
  std::map<std::pair<int, int>, Seconds> message_latencies_;
  std::exception_ptr failure_;
  std::vector<CallReport> calls_;
  HostCopyQueue host_copies_{*this};
  // A run beside host copies: it ends once only copying actors are left (pause_when_only_copies_left).
  bool copies_running_beside_ = false;
  bool paused_ = false;
  simgrid::s4u::ExecPtr pause_marker_;  // never started: its presence in the vetoed set ends the run
  std::set<simgrid::s4u::Activity*> pause_set_;

  void run_beside_host_copies();
  void pause_when_only_copies_left();
};

}  // namespace spmdsim::detail
