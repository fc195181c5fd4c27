// The memory tags of the models' own buffers, registered with the engine (memory.hpp) after its own, in the
// order the reports show them. Inline variables: every translation unit that tags with them has them
// registered before its own static objects are built.
#pragma once

#include "spmdsim/memory.hpp"
#include "spmdsim/memory_tags.hpp"

namespace spmdsim::models::tags {

inline const MemoryTag parameters = register_memory_tag("parameters");
// Fp32 master weights included, as the ZeRO paper counts them.
inline const MemoryTag optimizer_state = register_memory_tag("optimizer_state");
inline const MemoryTag gradients = register_memory_tag("gradients");
inline const MemoryTag activations = register_memory_tag("activations");  // saved for the backward pass
// Gradients flattened into one buffer per bucket for an overlapped all-reduce.
inline const MemoryTag communication_buckets = register_memory_tag("communication_buckets");

}  // namespace spmdsim::models::tags

namespace spmdsim::models {

// Parameters + optimizer state + gradients: what the ZeRO paper calls model states.
inline Bytes model_states(const MemoryByTag& memory) {
  return memory[tags::parameters] + memory[tags::optimizer_state] + memory[tags::gradients];
}

}  // namespace spmdsim::models
