// zero2, ZeRO stage 2 (P_os+g): as zero1, but the gradients are reduce-scattered (psum_scatter / N), so each
// device only ever keeps its shard of the averaged gradients.
#include <memory>

#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"
#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class Zero2 final : public TrainingStrategy {
 public:
  bool shards_optimizer_state() const override { return true; }
  Tree reduce(const DeviceStep& step, Tree grads) const override {
    return tag_as(mean_scatter_tree(grads, step.axis_name, step.num_devices), tags::gradients);
  }
  Tree update_weights(const DeviceStep& step, const Tree& params) const override {
    return local_shard_tree(params, step.rank, step.num_devices);
  }
  Tree updated_params(const DeviceStep& step, Tree updated) const override {
    return tag_as(gather_tree(updated, step.abstract_params, step.axis_name), tags::parameters);
  }
  double model_state_bytes(double psi, double num_devices) const override {
    return 2 * psi + 14 * psi / num_devices;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_zero2() {
  return std::make_unique<Zero2>();
}

}  // namespace spmdsim::models
