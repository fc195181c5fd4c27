#include "engine/copy_pause.hpp"

#include <limits>

#include <simgrid/kernel/Timer.hpp>

namespace spmdsim::detail {

// EngineImpl::run returns after the step in which the set of vetoed activities it tracks (read when the run
// starts) becomes non-empty: once only copying actors are left, a marker goes into that set and a timer due
// now keeps that step from advancing the clock. The copying actors and their transfers carry on in the next
// run. run_until() rather than run(): with actors left, run() takes a vetoed activity for an error. Its far
// deadline is only reached when the call's actors deadlock.
bool CopyPause::run() {
  constexpr double kNoDeadline = std::numeric_limits<double>::max() / 4;
  running_ = true;
  paused_ = false;
  engine_.track_vetoed_activities(&vetoed_);
  engine_.run_until(kNoDeadline);
  engine_.track_vetoed_activities(nullptr);
  vetoed_.clear();
  running_ = false;
  return paused_;
}

void CopyPause::actor_ended() {
  if (!running_ || paused_ || engine_.get_actor_count() != host_copies_.copier_count()) return;
  paused_ = true;
  if (!marker_) marker_ = simgrid::s4u::Exec::init();
  vetoed_.insert(marker_.get());
  simgrid::kernel::timer::Timer::set(simgrid::s4u::Engine::get_clock(), [] {});
}

}  // namespace spmdsim::detail
