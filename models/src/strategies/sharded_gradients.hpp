// What ZeRO-2 and ZeRO-3 share: the optimizer state and the gradients sharded. The gradients are
// reduce-scattered bucket by bucket as the backward pass completes them, as DeepSpeed's stage 2 and 3 do
// (reduce_bucket_size elements per bucket; FSDP reduce-scatters per wrap unit): a bucket is its gradients
// flattened and padded to N shards (tagged communication_buckets), reduce-scattered (tiled psum_scatter of
// its leaves as one collective) on the communication stream when overlap_comm is on, else at once with the
// program waiting; each device keeps its shard of each, divided by N, and the full-size bucket is freed as
// soon as the reduce-scatter is done with it.
#pragma once

#include <vector>

#include "training_strategy.hpp"

namespace spmdsim::models {

class ShardedGradients : public TrainingStrategy {
 public:
  bool shards_optimizer_state() const override { return true; }
  bool shards_gradients() const override { return true; }
  std::vector<GradientBucket> gradient_buckets(const std::vector<Bytes>& leaf_bytes, Bytes itemsize,
                                               const TrainOptions& options) const override;
  BucketResult start_bucket(const DeviceStep& step, std::vector<Array> grads) const override;
};

}  // namespace spmdsim::models
