// dp-overlap's gradient reduction inside the train step, after PyTorch DDP's Reducer: it is handed each
// unit's gradients as the backward finishes them, starts a bucket's pmean on the device's communication
// stream (async_collectives.hpp) as soon as the bucket's last gradient is in, and at the end waits for the
// buckets and gives the averaged gradients back in their shapes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

class BucketReducer {
 public:
  // buckets: assign_buckets over the params' leaves; unit_offsets[u]: the flattening index of unit u's first
  // leaf (one more entry: the leaf count).
  BucketReducer(const std::vector<GradientBucket>& buckets, const std::vector<std::size_t>& unit_offsets,
                std::string axis_name);

  // A unit's gradients, as they will be reduced (dtype included): starts every bucket they complete.
  void add(int unit, const Tree& grads);
  // Waits for every bucket, in the order they were started; the averaged gradients in flattening order.
  // Throws std::logic_error if a unit's gradients never came.
  std::vector<Array> finish();

 private:
  void start_complete_buckets();

  const std::vector<GradientBucket>& buckets_;
  const std::vector<std::size_t>& unit_offsets_;
  std::string axis_name_;
  std::vector<std::optional<Array>> ready_;  // by flattening index, until flattened into their bucket
  std::vector<std::vector<Shape>> shapes_;   // per started bucket, its gradients' shapes in bucket order
  std::vector<PendingCollective> pending_;   // per started bucket
};

}  // namespace spmdsim::models
