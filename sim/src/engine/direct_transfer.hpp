// A transfer between two hosts that no receiving actor takes (the device's memory, or the host's, takes it):
// for host<->device copies, whose values are handed over directly.
//
// A copy of several leaves between a device and its host is one transfer of their total bytes. Under the
// alpha-beta model the presets run, the last of several transfers started together on one route arrives when
// one transfer of their total would (latency + total bytes / bandwidth), and the callers wait for the last.
// SimGrid 3.32 keeps every host-to-host transfer in flight in one list (it detaches them) and removes each
// finished one by linear search: a transfer per leaf made a replicated 7B-parameter tree (390 leaves) on
// 1,024 devices 400,000 transfers and that search quadratic in them.
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// Starts `bytes` from `from` to `to` now, from the calling actor.
simgrid::s4u::CommPtr start_direct_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes);

}  // namespace spmdsim::detail
