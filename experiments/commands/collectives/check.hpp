// --check: a row's result against a float64 reference computed in a fixed order.
#pragma once

#include "commands/collectives/plan.hpp"
#include "spmdsim/array.hpp"

namespace spmdsim::cli::collectives {

// The largest |result - reference| over every device and element. `in` is (p, elements_in) and `out`
// (p, elements_out) as pmap stacks them; the reference sums in float64 over devices 0, 1, ..., p-1.
double max_error(const PlannedRow& row, const Array& in, const Array& out);

}  // namespace spmdsim::cli::collectives
