// The one place an op meets the simulated device: ops.cpp calls it after computing a result.
#pragma once

#include <string_view>

#include "spmdsim/array.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::detail {

// Inside a pmapped function: allocates `result` on the calling device (a temporary), takes the op's
// roofline time there and records it; returns the result bound to that device buffer. On the host:
// returns `result` unchanged.
Array account_op(std::string_view name, const OpCost& cost, Array result);

}  // namespace spmdsim::detail
