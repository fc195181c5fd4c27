// simgrid_network_settings (simulation.hpp): SimGrid's configuration read back, so that the commands can
// print the network model in force without naming SimGrid themselves.
#include <exception>

#include <fmt/format.h>
#include <xbt/config.hpp>

#include "engine/tcp_window.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim {

std::vector<std::pair<std::string, std::string>> simgrid_network_settings() {
  std::vector<std::pair<std::string, std::string>> settings;
  const auto read = [&](const char* name, auto sample) {
    try {
      settings.emplace_back(name, fmt::format("{}", simgrid::config::get_value<decltype(sample)>(name)));
    } catch (const std::exception&) {
    }
  };
  read("network/model", std::string());
  read("network/crosstraffic", bool());
  const double window = simgrid::config::get_value<double>("network/TCP-gamma");
  settings.emplace_back("network/TCP-gamma", fmt::format("{}", window == detail::kUnreachableTcpWindow ? 0 : window));
  read("network/optim", std::string());
  return settings;
}

}  // namespace spmdsim
