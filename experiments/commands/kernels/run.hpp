// `spmdsim kernels`: the device presets' kernel classes against published per-kernel measurements: each
// GEMM's predicted throughput (DeviceSpec::kernel_time) beside the published one, the points the presets'
// constants come from (fit) apart from the others (held out), and the error of each set.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::kernels {

// Runs the subcommand on its arguments (after "kernels"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::kernels
