// dp-overlap: dp with the gradients bucketed and all-reduced while the backward pass continues, as PyTorch
// DDP does (gradient_buckets.hpp assigns the buckets, bucket_reducer.hpp starts and waits for them): a
// bucket's gradients are copied into one flat buffer of its own and its pmean started on the device's
// communication stream.
#include <memory>
#include <utility>
#include <vector>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class OverlappedDataParallel final : public TrainingStrategy {
 public:
  std::vector<GradientBucket> gradient_buckets(const std::vector<Bytes>& leaf_bytes, Bytes /*itemsize*/,
                                               const TrainOptions& options) const override {
    return assign_buckets(leaf_bytes, options.bucket_bytes);
  }
  BucketResult start_bucket(const DeviceStep& step, std::vector<Array> grads) const override {
    std::vector<Shape> shapes;
    for (const Array& g : grads) shapes.push_back(g.shape());
    const Array flat = tag_as(flatten_bucket(grads), tags::communication_buckets);
    grads.clear();  // the bucket holds them now
    return [pending = pmean_start(flat, step.axis_name), shapes = std::move(shapes)]() mutable {
      std::vector<Array> means = unflatten_bucket(pending.wait(), shapes);
      for (Array& mean : means) mean = tag_as(mean, tags::gradients);
      return means;
    };
  }
  double model_state_bytes(double psi, double /*num_devices*/, double p, double g, double k) const override {
    return (p + g + k) * psi;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_dp_overlap() {
  return std::make_unique<OverlappedDataParallel>();
}

}  // namespace spmdsim::models
