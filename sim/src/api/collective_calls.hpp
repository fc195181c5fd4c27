// What the synchronous collectives (collectives.cpp) share with the asynchronous ones
// (async_collectives.cpp): the calling device's context, its reduction group, the all-reduce itself and
// pmean's division.
#pragma once

#include <string_view>
#include <vector>

#include "engine/device_context.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"

namespace spmdsim::detail {

// The calling device's context; NameError unless pmap bound every name of axis_name.
DeviceContext& device_for(const AxisName& axis_name);
// The group this device reduces with and its position there: the axis group, or the part of it `groups`
// puts this device in (groups index positions in the axis group). ValueError when the groups do not cover the
// axis exactly once or differ in size.
AxisGroup my_group(const AxisGroup& axis, const AxisIndexGroups& groups);
AxisGroup my_group(const DeviceContext& ctx, const AxisName& axis_name, const AxisIndexGroups& groups);
// all_gather along an axis group (pmap's own gathers of a nested pmap's results use it).
Array all_gather(const Array& x, const AxisGroup& axis, int out_axis);
// The configured all-reduce algorithm over x, timed as the collective `name` on the caller's track.
Array all_reduce(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups, ReduceOp op,
                 const char* name, const CollectiveOptions& options);
// jax.lax.pmean's last step: the sum divided by the group size, integers becoming float32 as in JAX.
Array mean_of_sum(const Array& total, double count);

}  // namespace spmdsim::detail
