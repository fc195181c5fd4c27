// The duration of a collective in a simulation's last call, as timing tests read it from the report.
#pragma once

#include <string>

#include "spmdsim/simulation.hpp"

namespace spmdsim::testing {

// The longest time any device spent in the collective `name` (its span, e.g. "psum") in the last call: the
// collective's duration (tree algorithms finish on different devices at different times).
double collective_time(const Simulation& sim, const std::string& name);

}  // namespace spmdsim::testing
