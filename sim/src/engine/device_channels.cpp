#include "engine/device_channels.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <xbt/config.hpp>

namespace spmdsim::detail {
namespace {

std::string endpoint_name(int device) {
  return device == DeviceChannels::kNodeSwitch ? "switch" : fmt::format("d{}", device);
}

// The network model's latency factor (1 under CM02, 13.01 under LV08).
double latency_factor() {
  return simgrid::config::get_value<double>("network/latency-factor");
}

// One integer per (from, to, track, lane): devices (and kNodeSwitch) in 24 bits each, the track in 1, the
// lane in the rest.
std::uint64_t channel_key(int from, int to, Track track, int lane) {
  constexpr int kDeviceBits = 24;
  const auto device = [](int d) { return static_cast<std::uint64_t>(d + 1); };  // kNodeSwitch is 0
  return (((static_cast<std::uint64_t>(lane) << 1 | (track == Track::stream ? 1 : 0)) << kDeviceBits |
           device(from))
          << kDeviceBits) |
         device(to);
}

}  // namespace

simgrid::s4u::Mailbox* DeviceChannels::channel(int from, int to, Track track, int lane) {
  const std::uint64_t key = channel_key(from, to, track, lane);
  auto it = channels_.find(key);
  if (it == channels_.end()) {
    const std::string suffix =
        std::string(track == Track::program ? "" : "/stream") + (lane == 0 ? "" : fmt::format("#{}", lane));
    it = channels_
             .emplace(key,
                      simgrid::s4u::Mailbox::by_name(endpoint_name(from) + ">" + endpoint_name(to) + suffix))
             .first;
  }
  return it->second;
}

Seconds DeviceChannels::message_latency(int from, int to) {
  const auto key = std::make_pair(from, to);
  auto it = message_latencies_.find(key);
  if (it == message_latencies_.end()) {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    hosts_.device(from)->route_to(hosts_.device(to), links, &latency);
    it = message_latencies_.emplace(key, latency * latency_factor()).first;
  }
  return it->second;
}

}  // namespace spmdsim::detail
