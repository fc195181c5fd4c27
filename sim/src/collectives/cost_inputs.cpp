#include "collectives/cost_inputs.hpp"

#include <algorithm>
#include <limits>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "collectives/selection.hpp"

namespace spmdsim::collectives {

CostInputs cost_inputs(const detail::DeviceContext& ctx, const std::vector<int>& group, double bytes,
                       DType dtype) {
  CostInputs c;
  c.p = static_cast<int>(group.size());
  c.n = bytes;
  if (c.p > 1) {
    const auto& hosts = ctx.runtime().hosts();
    auto* a = hosts.device(ctx.device_at(group[0]));
    auto* b = hosts.device(ctx.device_at(group[1]));
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    a->route_to(b, links, &latency);
    double bandwidth = std::numeric_limits<double>::infinity();
    for (auto* link : links) bandwidth = std::min(bandwidth, link->get_bandwidth());
    c.alpha = latency;
    c.beta = 1.0 / bandwidth;
  }
  c.gamma = reduction_seconds_per_byte(ctx.spec(), dtype);
  return c;
}

}  // namespace spmdsim::collectives
