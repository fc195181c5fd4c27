// What every model's value_and_grad hands back, and how it is handed its parameters. A model's params are a
// list of fetch units (the MLP: one dict per layer; the transformer: embedding, blocks, head); a pass asks
// for a unit's params when it needs them, so a strategy that keeps them sharded (ZeRO-3) can all-gather
// them just in time and have them freed right after; it tells the caller each unit's gradients as they are
// ready (GradsReady), so a strategy can reduce them while the backward continues.
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

// Handed each unit's gradients as soon as the backward pass has finished them, in the order it finishes them:
// last unit first. The pass keeps no reference to what it hands over (its returned grads hold None for that
// unit), so a data-parallel step can reduce them while the backward goes on (dp-overlap, as PyTorch DDP's
// autograd hooks do) and, keeping only a shard (ZeRO-2/3), have the full-size gradients freed. May be empty.
using GradsReady = std::function<void(int unit, Tree grads)>;

}  // namespace spmdsim::models
