// What happens when a device's actor throws: the first failure is kept, to be rethrown by the run, and the
// other actors are killed so that none waits forever for a message the failed one will never send. The
// host's copies wait for nobody and carry on.
#pragma once

#include <exception>

#include <simgrid/s4u/Engine.hpp>

#include "engine/host_copies.hpp"

namespace spmdsim::detail {

class Failures {
 public:
  Failures(simgrid::s4u::Engine& engine, const HostCopyQueue& host_copies)
      : engine_(engine), host_copies_(host_copies) {}

  // Called by a failing actor.
  void fail(std::exception_ptr error);
  // Before a run: no failure yet.
  void clear() { first_ = nullptr; }
  bool any() const { return first_ != nullptr; }
  // After a run: rethrows its first failure, if any, and clears it.
  void rethrow_first();

 private:
  simgrid::s4u::Engine& engine_;
  const HostCopyQueue& host_copies_;
  std::exception_ptr first_;
};

}  // namespace spmdsim::detail
