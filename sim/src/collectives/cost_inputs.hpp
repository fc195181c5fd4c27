// What the `auto` policy (selection.hpp) weighs for one call: the alpha-beta-gamma figures of the group's
// network, read from the platform, and of the calling device's reductions.
#pragma once

#include <vector>

#include "engine/device_context.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/dtype.hpp"

namespace spmdsim::collectives {

// For `bytes` over `group` (ranks of the calling device's axis): alpha and beta are the latency and the
// narrowest link's inverse bandwidth of the route between the group's first two devices, gamma is this
// device's reduction_seconds_per_byte.
CostInputs cost_inputs(const detail::DeviceContext& ctx, const std::vector<int>& group, double bytes,
                       DType dtype);

}  // namespace spmdsim::collectives
