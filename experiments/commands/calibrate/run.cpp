#include "commands/calibrate/run.hpp"

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "commands/calibrate/calibration.hpp"
#include "common/command_line.hpp"
#include "common/forked_run.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli::calibrate {
namespace {

namespace po = boost::program_options;
using topologies::NodePreset;

struct CalibrateOptions {
  std::vector<const NodePreset*> presets;
  std::string docs_path;  // empty: do not write
};

std::vector<std::string_view> calibrated_names() {
  std::vector<std::string_view> names;
  for (const auto& p : topologies::node_presets())
    if (p.calibration) names.push_back(p.name);
  return names;
}

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
      "also write the comparison as markdown to this file (default: the source tree's docs/calibration.md)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout
        << "usage: spmdsim calibrate [options] [--cfg=simgrid/setting:value ...]\n\n"
        << "Simulates each node preset's all-reduce at the sizes of its published nccl-tests figure and\n"
        << "prints simulated vs published busbw, the error, and the model correction that would remove it.\n"
        << "A --cfg given here overrides the preset's network settings.\n\n"
        << described << "\n";
    return std::nullopt;
  }
  po::notify(vm);
  const auto valid = calibrated_names();
  std::vector<std::string> names = split_list(presets);
  if (vm.count("presets") && names.empty()) throw UsageError("--presets names no preset");
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

// SimGrid keeps one engine per process, so each simulation runs in a child process of its own, which hands
// back one line per point: "<bytes> <time> <busbw>".
std::vector<CalibrationPoint> simulate_in_child(const NodePreset& preset, double link_scale,
                                                const std::vector<std::string>& simgrid_args) {
  const std::string text = run_in_child(fmt::format("calibrating {}", preset.name), [&] {
    std::string lines;
    for (const auto& p : simulate_calibration(preset, link_scale, simgrid_args))
      lines += fmt::format("{:.17g} {:.17g} {:.17g}\n", p.bytes, p.time, p.busbw);
    return lines;
  });
  std::vector<CalibrationPoint> points;
  std::istringstream in(text);
  for (CalibrationPoint p; in >> p.bytes >> p.time >> p.busbw;) points.push_back(p);
  if (points.size() != preset.calibration->sizes.size())
    throw std::runtime_error(fmt::format("calibrating {}: expected {} results, got {}", preset.name,
                                         preset.calibration->sizes.size(), points.size()));
  return points;
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  std::vector<CalibrationResult> results;
  for (const auto* preset : parsed->presets) {
    auto points = simulate_in_child(*preset, 1.0, simgrid_args);
    auto doubled = simulate_in_child(*preset, 2.0, simgrid_args);
    results.push_back(make_result(*preset, calibration_settings(*preset, simgrid_args), std::move(points),
                                  std::move(doubled)));
  }
  write_calibration_table(std::cout, results);
  if (!parsed->docs_path.empty()) {
    write_file_atomically(parsed->docs_path,
                          [&](std::ostream& out) { write_calibration_markdown(out, results); });
    std::cout << fmt::format("\n# wrote {}\n", parsed->docs_path);
  }
  return 0;
}

}  // namespace spmdsim::cli::calibrate
