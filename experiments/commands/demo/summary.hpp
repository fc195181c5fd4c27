// The demo's last table: the whole run per device, from the public SimulationReport.
#pragma once

#include <ostream>

#include "spmdsim/report.hpp"

namespace spmdsim::cli::demo {

// One row per device: compute, the time waited in each kind of collective the run used, host <-> device
// transfers, idle, the memory peak and what the device held at that peak by tag (the tags any device used).
void write_summary(std::ostream& out, const SimulationReport& report);

}  // namespace spmdsim::cli::demo
