// The `auto` policy, kept apart from the algorithms: per call, the registered algorithm of the kind with the
// lowest closed-form time for this many ranks and bytes on this network.
#pragma once

#include <string_view>

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

// Among the algorithms of `kind` that accept c.p ranks, the one whose cost(c) is lowest (the first in
// registry order on ties).
std::string_view choose_algorithm(CollectiveKind kind, const CostInputs& c);

}  // namespace spmdsim::collectives
