// The network endpoints between devices: one SimGrid mailbox per ordered pair of devices, track and lane, and
// the latency a message between two devices pays (cached: a route is looked up once per pair).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include <simgrid/s4u/Mailbox.hpp>

#include "engine/platform_hosts.hpp"
#include "spmdsim/report.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::detail {

class DeviceChannels {
 public:
  explicit DeviceChannels(const PlatformHosts& hosts) : hosts_(hosts) {}

  // The channel from one device to another. Messages between one ordered pair are matched in the order
  // both sides post them, which is SPMD program order, so a fast sender can never be received early. The
  // communication streams (async_collectives.hpp) have channels of their own, matched in the streams' order,
  // and so has each lane: the NCCL channels of one collective (Communicator::in_parallel) run side by side,
  // each matched in its own order.
  // `kNodeSwitch` as either end names the reducing switch of the other end's node.
  simgrid::s4u::Mailbox* channel(int from, int to, Track track = Track::program, int lane = 0);
  static constexpr int kNodeSwitch = -1;
  // The latency one message from device `from` to device `to` pays: its route's, times the network
  // model's latency factor.
  Seconds message_latency(int from, int to);

 private:
  const PlatformHosts& hosts_;
  // Keyed by channel_key: looked up twice per message, so a hash of one integer, not a tree of tuples.
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> channels_;
  std::map<std::pair<int, int>, Seconds> message_latencies_;
};

}  // namespace spmdsim::detail
