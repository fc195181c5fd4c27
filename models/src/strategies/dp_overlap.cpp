// dp-overlap: dp with the gradients bucketed and all-reduced while the backward pass continues, as PyTorch
// DDP does (gradient_buckets.hpp assigns the buckets, bucket_reducer.hpp starts and waits for them).
#include <memory>
#include <vector>

#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class OverlappedDataParallel final : public TrainingStrategy {
 public:
  std::vector<GradientBucket> gradient_buckets(const std::vector<Bytes>& leaf_bytes,
                                               Bytes cap) const override {
    return assign_buckets(leaf_bytes, cap);
  }
  double model_state_bytes(double psi, double /*num_devices*/) const override { return 16 * psi; }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_dp_overlap() {
  return std::make_unique<OverlappedDataParallel>();
}

}  // namespace spmdsim::models
