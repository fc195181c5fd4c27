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
#include <functional>
#include <string>
#include <vector>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/models/data_parallel.hpp"
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
  bool overlap_comm;  // bucket reductions on the communication stream (else the program waits for each)
};

// A gradient bucket's reduction once started: waits for it and gives this device's part of each of the
// bucket's gradients, in bucket order.
using BucketResult = std::function<std::vector<Array>()>;

class TrainingStrategy {
 public:
  virtual ~TrainingStrategy() = default;

  // Layout: true where each device holds its flat shard of every leaf, false where it holds the whole tree.
  virtual bool shards_params() const { return false; }
  virtual bool shards_optimizer_state() const { return false; }
  // True where each device keeps only its shard of the reduced gradients (ZeRO-2 and 3).
  virtual bool shards_gradients() const { return false; }

  // Once per train step, from the size of each gradient leaf (in the reduce dtype, flattening order), that
  // dtype's size and the options: the buckets the gradients are reduced in while a backward runs (the last,
  // or every micro-batch's where the gradients are sharded and zero.no_sync is off).
  // Empty: they are reduced whole by reduce(), once the backward is over.
  virtual std::vector<GradientBucket> gradient_buckets(const std::vector<Bytes>& leaf_bytes, Bytes itemsize,
                                                       const TrainOptions& options) const;
  // Starts reducing one bucket's gradients (in the reduce dtype, bucket order), as the backward completes it.
  virtual BucketResult start_bucket(const DeviceStep& step, std::vector<Array> grads) const;

  // Sharded params only: starts gathering these units' params (one wrap unit, a list of them) from this
  // device's shards of them (params, every unit), and makes a unit's gathered leaves its params (their
  // shapes, tagged parameters).
  virtual PendingTree start_gather(const DeviceStep& step, const std::vector<int>& units,
                                   const Tree& params) const;
  virtual Tree gathered_unit(const DeviceStep& step, std::size_t unit, Tree gathered) const;

  // The mean over the devices of this device's gradients (already averaged over micro-batches and in the
  // reduce dtype): whole, or this device's shards.
  virtual Tree reduce(const DeviceStep& step, Tree grads) const;
  // Without mixed precision: the fp32 weights the update runs on, from the params the device holds.
  virtual Tree update_weights(const DeviceStep& step, const Tree& params) const;
  // The gradients the update runs on, from reduce()'s.
  virtual Tree update_grads(const DeviceStep& step, Tree reduced) const;
  // The params the step gives back, from the updated ones (in the compute dtype).
  virtual Tree updated_params(const DeviceStep& step, Tree updated) const;

  // The ZeRO paper's per-device model-state bytes (Rajbhandari et al. 2020, Sec. 3 and 5) for psi parameters
  // on N devices with p bytes of parameters, g of gradients and k of optimizer state per parameter: what the
  // strategy keeps of each, whole or 1/N. Mixed-precision Adam is the paper's case, p = g = 2, k = 12.
  virtual double model_state_bytes(double psi, double num_devices, double p, double g, double k) const = 0;
};

}  // namespace spmdsim::models
