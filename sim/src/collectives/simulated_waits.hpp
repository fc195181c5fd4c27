// Waits of simulated time on the calling actor, as both Communicator backends take them.
#pragma once

#include <simgrid/s4u/Actor.hpp>

#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// The duration a wait of `duration` takes: SimGrid resolves time to 1 ns (surf/precision) and reports every
// shorter wait on the console (a channel's pace for a few bytes at NCCL's rates on Blackwell is 0.3 ns), so
// those are not waited.
inline Seconds waited(Seconds duration) {
  constexpr Seconds kSimGridPrecision = 1e-9;
  return duration >= kSimGridPrecision ? duration : 0;
}

// Waits `duration` on the calling actor, as waited() says.
inline void wait_for(Seconds duration) {
  if (const Seconds wait = waited(duration); wait > 0) simgrid::s4u::this_actor::sleep_for(wait);
}

}  // namespace spmdsim::detail
