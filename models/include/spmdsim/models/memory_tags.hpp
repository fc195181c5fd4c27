// The memory tags of the models' own buffers, registered with the engine (memory.hpp) after its own, in the
// order the reports show them.
//
// All five are registered together by the first use of any (registered_model_tags), so their order never
// depends on the order in which translation units initialise their statics, which C++ leaves open between
// files and compilers do not agree on for inline variables. The variables below are for code that runs once
// main has started; a namespace-scope object of another file must not be built from them (read them in a
// function instead).
#pragma once

#include <array>

#include "spmdsim/memory.hpp"
#include "spmdsim/memory_tags.hpp"

namespace spmdsim::models::tags {

// parameters, optimizer_state, gradients, activations, communication_buckets, in that order.
const std::array<MemoryTag, 5>& registered_model_tags();

inline const MemoryTag parameters = registered_model_tags()[0];
// Fp32 master weights included, as the ZeRO paper counts them.
inline const MemoryTag optimizer_state = registered_model_tags()[1];
inline const MemoryTag gradients = registered_model_tags()[2];
inline const MemoryTag activations = registered_model_tags()[3];  // saved for the backward pass
// Gradients flattened into one buffer per bucket for an overlapped all-reduce.
inline const MemoryTag communication_buckets = registered_model_tags()[4];

}  // namespace spmdsim::models::tags

namespace spmdsim::models {

// Parameters + optimizer state + gradients: what the ZeRO paper calls model states.
inline Bytes model_states(const MemoryByTag& memory) {
  return memory[tags::parameters] + memory[tags::optimizer_state] + memory[tags::gradients];
}

}  // namespace spmdsim::models
