// Gradient reduction during the backward pass, bucket by bucket, after PyTorch DDP's Reducer and DeepSpeed's
// ZeRO-2 reduction buckets: it is handed each unit's gradients as the backward finishes them, starts a
// bucket's reduction (the strategy's start_bucket: an all-reduce for dp-overlap, a reduce-scatter for ZeRO-2
// and ZeRO-3) as soon as the bucket's last gradient is in, keeping no other reference to the gradients, and
// at the end waits for the buckets and gives this device's part of every gradient back.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/pytree.hpp"
#include "strategies/training_strategy.hpp"

namespace spmdsim::models {

class BucketReducer {
 public:
  using Start = std::function<BucketResult(std::vector<Array> grads)>;

  // buckets: assign_buckets over the params' leaves; unit_offsets[u]: the flattening index of unit u's first
  // leaf (one more entry: the leaf count).
  BucketReducer(const std::vector<GradientBucket>& buckets, const std::vector<std::size_t>& unit_offsets,
                Start start);

  // A unit's gradients, as they will be reduced (dtype included): starts every bucket they complete.
  void add(int unit, const Tree& grads);
  // Waits for every bucket, in the order they were started; this device's part of each gradient in flattening
  // order. Throws std::logic_error if a unit's gradients never came.
  std::vector<Array> finish();

 private:
  void start_complete_buckets();

  const std::vector<GradientBucket>& buckets_;
  const std::vector<std::size_t>& unit_offsets_;
  Start start_;
  std::vector<std::optional<Array>> ready_;  // by flattening index, until their bucket is started
  std::vector<BucketResult> pending_;        // per started bucket
};

}  // namespace spmdsim::models
