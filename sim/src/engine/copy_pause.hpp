// A run beside the host's copies: SimGrid's run() returns only once nothing is left to simulate, but a call
// must end when its own actors do, with the host's copies still in flight, so that the host's next call
// starts then. SimGrid 3.32 cannot pause a transfer exactly (resuming one still in its latency phase gives it
// bandwidth early), so the run stops the engine instead, once only copying actors are left.
#pragma once

#include <set>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "engine/host_copies.hpp"

namespace spmdsim::detail {

class CopyPause {
 public:
  CopyPause(simgrid::s4u::Engine& engine, const HostCopyQueue& host_copies)
      : engine_(engine), host_copies_(host_copies) {}

  // Runs the engine until only copying actors are left. Returns false if it ended otherwise (every actor
  // done, or killed by a failure).
  bool run();
  // Called when any actor ends, once the queue has forgotten it.
  void actor_ended();

 private:
  simgrid::s4u::Engine& engine_;
  const HostCopyQueue& host_copies_;
  bool running_ = false;
  bool paused_ = false;
  simgrid::s4u::ExecPtr marker_;  // never started: its presence in the vetoed set ends the run
  std::set<simgrid::s4u::Activity*> vetoed_;
};

}  // namespace spmdsim::detail
