// `spmdsim calibrate`'s options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli::calibrate {

struct CalibrateOptions {
  std::vector<const topologies::NodePreset*> presets;  // with a calibration target, each once
  std::string docs_path;                               // empty: do not write
  bool curves = false;                                 // also the published curves (curve_comparison.hpp)
  std::string curve_algorithm = "nccl";           // what simulates them
  bool fit = false;  // also refit the constants published points were fitted to (constant_fit.hpp)
};

// The options of `args` (SimGrid's taken out); nothing when --help was asked for (and printed). Throws
// UsageError for a preset with no calibration target, listing those that have one.
std::optional<CalibrateOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::calibrate
