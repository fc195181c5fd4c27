// What every model's value_and_grad hands back, and how it is handed its parameters. A model's params are a
// list of fetch units (the MLP: one dict per layer; the transformer: embedding, blocks, head); a pass asks
// for a unit's params when it needs them, so a strategy that keeps them sharded (ZeRO-3) can all-gather
// them just in time and have them freed right after.
#pragma once

#include <functional>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

// A loss and the gradients of that loss with respect to the parameters (same tree structure as them).
struct LossAndGrads {
  Array loss;  // 0-d, float32 (float64 for float64 parameters)
  Tree grads;
};

// Gives params[unit] when the pass needs it. The pass holds what it returns only while it works on that
// unit. A forward pass fetches the units in order, the backward pass in reverse order, every unit (as a
// ZeRO-3 / FSDP pre-backward hook does, even where the backward needs no weight).
using LayerFetch = std::function<Tree(int unit)>;

}  // namespace spmdsim::models
