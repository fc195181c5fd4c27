// dp: params and optimizer state replicated; each device computes the gradients of its batch shard, they are
// averaged with pmean (an all-reduce) and every device applies the identical update. Every hook's default.
#include <memory>

#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class DataParallel final : public TrainingStrategy {
 public:
  double model_state_bytes(double psi, double /*num_devices*/, double p, double g, double k) const override {
    return (p + g + k) * psi;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_dp() {
  return std::make_unique<DataParallel>();
}

}  // namespace spmdsim::models
