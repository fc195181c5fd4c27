// `spmdsim calibrate`: the node presets' simulated all-reduce busbw against the published figures they are
// calibrated to (experiments/commands/calibrate/calibration.hpp), as a table; --write-docs regenerates
// docs/calibration.md.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::calibrate {

// Runs the subcommand on its arguments (after "calibrate"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::calibrate
