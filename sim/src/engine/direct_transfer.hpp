// A transfer between two hosts that no receiving actor takes (the device's memory, or the host's, takes it):
// for host<->device copies, whose values are handed over directly.
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// Starts `bytes` from `from` to `to` now, from the calling actor.
simgrid::s4u::CommPtr start_direct_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes);

}  // namespace spmdsim::detail
