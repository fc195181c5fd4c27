#include "sharded_gradients.hpp"

#include <utility>

#include "spmdsim/collectives.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

std::vector<Array> shard_means(const Tree& sums, int num_devices) {
  std::vector<Array> means;
  for (const Array& sum : sums.leaves())
    means.push_back(tag_as(sum / static_cast<double>(num_devices), tags::gradients));
  return means;
}

}  // namespace

std::vector<GradientBucket> ShardedGradients::gradient_buckets(const std::vector<Bytes>& leaf_bytes,
                                                               Bytes itemsize,
                                                               const TrainOptions& options) const {
  return assign_buckets(leaf_bytes, static_cast<Bytes>(options.zero.reduce_bucket_elements) * itemsize);
}

BucketResult ShardedGradients::start_bucket(const DeviceStep& step, std::vector<Array> grads) const {
  const Tree bucket = tag_as(padded_flat_tree(Tree::list({grads.begin(), grads.end()}), step.num_devices),
                             tags::communication_buckets);
  grads.clear();  // the bucket holds them now
  const int n = step.num_devices;
  if (!step.overlap_comm) {
    std::vector<Array> means = shard_means(psum_scatter(bucket, step.axis_name, 0, /*tiled=*/true), n);
    return [means = std::move(means)]() mutable { return std::move(means); };
  }
  return [pending = psum_scatter_start(bucket, step.axis_name, 0, /*tiled=*/true), n]() mutable {
    return shard_means(pending.wait(), n);
  };
}

}  // namespace spmdsim::models
