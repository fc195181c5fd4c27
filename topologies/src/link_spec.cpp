#include "spmdsim/topologies/link_spec.hpp"

#include <cmath>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::topologies {

void check_link(const char* what, const LinkSpec& link) {
  if (!(link.bandwidth > 0) || std::isinf(link.bandwidth))
    throw ValueError(fmt::format("{}: bandwidth must be positive and finite (got {} B/s)", what, link.bandwidth));
  if (!(link.latency >= 0) || std::isinf(link.latency))
    throw ValueError(fmt::format("{}: latency must be finite and >= 0 (got {} s)", what, link.latency));
}

}  // namespace spmdsim::topologies
