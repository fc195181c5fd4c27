#include "commands/calibrate/options.hpp"

#include <algorithm>
#include <iostream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::cli::calibrate {
namespace {

namespace po = boost::program_options;

std::vector<std::string_view> calibrated_names() {
  std::vector<std::string_view> names;
  for (const auto& p : topologies::node_presets())
    if (p.calibration) names.push_back(p.name);
  return names;
}

}  // namespace

std::optional<CalibrateOptions> parse(const std::vector<std::string>& args) {
  CalibrateOptions options;
  std::string presets;
  po::options_description described("spmdsim calibrate options");
  described.add_options()("help,h", "show this help")(
      "presets", po::value(&presets),
      fmt::format("node presets to calibrate, comma-separated (default: all with a target: {})",
                  fmt::join(calibrated_names(), ", "))
          .c_str())(
      "write-docs", po::value(&options.docs_path)->implicit_value(SPMDSIM_DOCS_DIR "/calibration.md"),
      "also write the comparison as markdown to this file (default: the source tree's docs/calibration.md)")(
      "curves", po::bool_switch(&options.curves),
      "also simulate every published curve (32 KiB-16 GiB, 1-8 nodes; data/published_busbw.csv) point by "
      "point")("curve-algorithm", po::value(&options.curve_algorithm)->default_value("nccl"),
               "the all_reduce, all_gather and reduce_scatter algorithm the curves are simulated with (nccl: NCCL's "
               "choice, and nccl_ring on the curves NCCL ran as Ring)")(
      "fit", po::bool_switch(&options.fit),
      "also fit again each preset constant that published points were fitted to (data/published_busbw.csv's "
      "fitted column), simulating them as --curves does with nccl (whatever --curve-algorithm says), and print "
      "the fit beside the preset's value");
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim calibrate [options] [--cfg=simgrid/setting:value ...]\n\n"
        << "Simulates each node preset's all-reduce at the sizes of its published nccl-tests figure and\n"
        << "prints simulated vs published busbw, the error, and the model correction that would remove it.\n"
        << "A --cfg given here overrides the preset's network settings.\n\n"
        << described << "\n";
    return std::nullopt;
  }
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const auto names = algorithm_names(kind);
    if (std::find(names.begin(), names.end(), options.curve_algorithm) == names.end())
      throw UsageError(fmt::format("--curve-algorithm '{}' is not registered for {}; valid: {}",
                                   options.curve_algorithm, collective_kind_name(kind),
                                   fmt::join(names, ", ")));
  }
  const auto valid = calibrated_names();
  std::vector<std::string> names = split_list(presets);
  if (values.map().count("presets") && names.empty()) throw UsageError("--presets names no preset");
  if (names.empty()) names.assign(valid.begin(), valid.end());
  for (const auto& name : names) {
    if (std::find(valid.begin(), valid.end(), name) == valid.end())
      throw UsageError(
          fmt::format("unknown node preset '{}' in --presets; valid: {}", name, fmt::join(valid, ", ")));
    const auto* preset = &topologies::node_preset(name);
    if (std::find(options.presets.begin(), options.presets.end(), preset) == options.presets.end())
      options.presets.push_back(preset);
  }
  return options;
}

}  // namespace spmdsim::cli::calibrate
