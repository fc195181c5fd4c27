#include "commands/presets/options.hpp"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"

namespace spmdsim::cli::presets {
namespace {

namespace po = boost::program_options;

std::string valid_kinds() {
  std::vector<std::string_view> names;
  for (const auto& k : kinds()) names.push_back(k.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::optional<PresetsOptions> parse(const std::vector<std::string>& args) {
  PresetsOptions options;
  std::string kind;
  po::options_description described("spmdsim presets options");
  described.add_options()("help,h", "show this help")(
      "kind", po::value(&kind), "list only this kind: devices, links, nodes or slices (default: all)")(
      "json", po::value(&options.json_path), "also write the presets as JSON to this file");
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout << "usage: spmdsim presets [options]\n\n"
              << "The devices, links, nodes and TPU slices spmdsim knows, with every figure and its source\n"
              << "(topologies/src/presets.cpp; docs/presets.md explains them).\n\n"
              << described << "\n";
    return std::nullopt;
  }
  for (const auto& k : kinds())
    if (kind.empty() || k.name == kind) options.kinds.push_back(&k);
  if (options.kinds.empty())
    throw UsageError(fmt::format("unknown --kind '{}'; valid: {}", kind, valid_kinds()));
  return options;
}

}  // namespace spmdsim::cli::presets
