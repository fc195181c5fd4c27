// The `auto` policy, kept apart from the algorithms: per call, the registered algorithm of the kind with the
// lowest closed-form time for this many ranks and bytes on this network (cost_inputs.hpp measures the network).
#pragma once

#include <string_view>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/device_spec.hpp"
#include "spmdsim/dtype.hpp"

namespace spmdsim::collectives {

// Reducing two arrays into one does one arithmetic op (an add, a max, ...) per element.
inline constexpr double kReductionFlopsPerElement = 1.0;
// It reads both operands and writes the result: three passes through device memory per byte reduced.
inline constexpr double kReductionMemoryPassesPerByte = 3.0;

// The gamma of the alpha-beta-gamma costs: the seconds a device takes to reduce one byte, at the roofline of
// its peak for `dtype` and its memory bandwidth (whichever is slower).
double reduction_seconds_per_byte(const DeviceSpec& spec, DType dtype);

// Among the algorithms of `kind` that accept c.p ranks, the one whose cost(c) is lowest (the first in
// registry order on ties).
std::string_view choose_algorithm(CollectiveKind kind, const CostInputs& c);

}  // namespace spmdsim::collectives
