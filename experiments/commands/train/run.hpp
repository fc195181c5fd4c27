// `spmdsim train`: strong and weak scaling of data-parallel training of the seeds' MLP over device counts.
// Each count trains in its own simulation (a child process); the output is a table per device count of
// throughput, the step time broken into compute, communication, host transfer and idle, the scaling
// efficiency against the smallest count and the peak memory per device, plus CSV, JSON and plots.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::train {

// Runs the subcommand on its arguments (after "train"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::train
