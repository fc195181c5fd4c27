// What sets one data-parallel strategy apart from another (data_parallel.hpp): which parts of the model state
// each device holds as its 1/N flat shards (sharding.hpp), which params a unit's forward and backward get,
// how the gradients are reduced, what the optimizer update runs on and what params it gives back. The step
// itself (fetch, accumulate over micro-batches, reduce, update, gather) is written once, in
// data_parallel.cpp, and asks the step's strategy at each of these points.
//
// Every hook's default is plain data parallelism (dp): everything replicated, gradients all-reduced,
// the update on whole leaves. A strategy is one file of this folder overriding what it does differently,
// listed in registry.cpp. Hooks take by value the trees they consume, so a consumed tree's buffers are
// released as the hook returns, not kept to the end of the step (the memory peak depends on it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/pytree.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::models {

// One device's view of the running step, as the hooks below need it.
struct DeviceStep {
  const Tree& abstract_params;  // the full fp32 params' shapes, unit by unit
  const std::string& axis_name;
  int rank;
  int num_devices;
};

class TrainingStrategy {
 public:
  virtual ~TrainingStrategy() = default;

  // Layout: true where each device holds its flat shard of every leaf, false where it holds the whole tree.
  virtual bool shards_params() const { return false; }
  virtual bool shards_optimizer_state() const { return false; }

  // Once per train step, from the size of each gradient leaf (in the reduce dtype, flattening order) and the
  // bucket cap: the buckets the gradients are all-reduced in while the last backward runs. Empty: they are
  // reduced whole by reduce(), once the backward is over.
  virtual std::vector<GradientBucket> gradient_buckets(const std::vector<Bytes>& leaf_bytes, Bytes cap) const;

  // The params unit `unit`'s forward or backward needs, from the params the device holds (every unit).
  virtual Tree fetch(const DeviceStep& step, std::size_t unit, const Tree& params) const;
  // The mean over the devices of this device's gradients (already averaged over micro-batches and in the
  // reduce dtype): whole, or this device's shards.
  virtual Tree reduce(const DeviceStep& step, Tree grads) const;
  // Without mixed precision: the fp32 weights the update runs on, from the params the device holds.
  virtual Tree update_weights(const DeviceStep& step, const Tree& params) const;
  // The gradients the update runs on, from reduce()'s.
  virtual Tree update_grads(const DeviceStep& step, Tree reduced) const;
  // The params the step gives back, from the updated ones (in the compute dtype).
  virtual Tree updated_params(const DeviceStep& step, Tree updated) const;

  // The ZeRO paper's per-device model-state bytes for mixed-precision Adam (K = 12) on N devices.
  virtual double model_state_bytes(double psi, double num_devices) const = 0;
};

}  // namespace spmdsim::models
