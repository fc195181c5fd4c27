// `spmdsim demo`: the pmap tutorials' data-parallel examples on simulated devices, with their results and
// the timing and memory report.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::demo {

// Runs the subcommand on its arguments (after "demo"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::demo
