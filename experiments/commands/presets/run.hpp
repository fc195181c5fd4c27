// `spmdsim presets`: the preset table (topologies/presets.hpp) as a user reads it: every device, link, node
// and TPU slice with its figures and the source of each, optionally as JSON.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::presets {

// Runs the subcommand on its arguments (after "presets"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::presets
