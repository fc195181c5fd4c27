// `spmdsim validate`: the end-to-end step times of published data-parallel training runs against spmdsim's,
// each run as its row's `spmdsim train` command (published_runs.hpp), with the error of each row and how many
// are within 15% (docs/training.md, "Validation").
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::validate {

// Runs the subcommand on its arguments (after "validate"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::validate
