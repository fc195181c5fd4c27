// `spmdsim memory`: what one training step holds in device memory, per model and strategy. Each (model,
// strategy) runs one abstract step in its own simulation (a child process); the output is a table of the
// largest device's peak by tag, its model states against the ZeRO paper's formula and the device capacity,
// plus CSV, JSON and plots (stacked bars per strategy with the capacity line; memory over time through the
// step on device 0). With --fit batch or --fit layers it searches instead for the largest per-device batch or
// number of transformer blocks that fits.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::memory {

// Runs the subcommand on its arguments (after "memory"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::memory
