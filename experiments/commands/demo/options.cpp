#include "commands/demo/options.hpp"

#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/device_list.hpp"

namespace spmdsim::cli::demo {

namespace po = boost::program_options;

std::optional<DemoOptions> parse(const std::vector<std::string>& args) {
  DemoOptions options;
  std::string devices;
  po::options_description described("spmdsim demo options");
  described.add_options()("help,h", "show this help")(
      "devices", po::value(&devices)->default_value("8"),
      fmt::format("number of simulated devices (2 to {})", kMaxDevices).c_str())(
      "verbose,v", po::bool_switch(&options.verbose),
      "also print the report of each call (per device: time by kind, memory by tag) before the summary")(
      "json", po::value<std::string>(&options.json_path), "also write the report as JSON to this file")(
      "trace", po::value<std::string>(&options.trace_path),
      "also write a Chrome/Perfetto trace to this file");
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout << "usage: spmdsim demo [options] [--cfg=simgrid/setting:value ...]\n\n" << described << "\n";
    return std::nullopt;
  }
  options.devices = parse_device_count(devices, 2);
  return options;
}

}  // namespace spmdsim::cli::demo
