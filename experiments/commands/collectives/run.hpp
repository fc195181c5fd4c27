// `spmdsim collectives`: an nccl-tests-style sweep. Each collective runs over a range of message sizes, for
// each chosen algorithm and device count, on one simulated platform; the output is nccl-tests' table
// (size, count, type, redop, time, algbw, busbw) with the algorithm, the device count, the error against a
// float64 reference and whether the row ran on real data or on shapes only, plus CSV, JSON and plots.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::collectives {

// Runs the subcommand on its arguments (after "collectives"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::collectives
