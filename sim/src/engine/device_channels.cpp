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

}  // namespace

simgrid::s4u::Mailbox* DeviceChannels::channel(int from, int to, Track track, int lane) {
  const auto key = std::make_tuple(from, to, track, lane);
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
