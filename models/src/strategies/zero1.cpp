// zero1, ZeRO stage 1 (P_os): params replicated, optimizer state sharded; the gradients are all-reduced as
// in dp, each device updates its shard of the params with its shard of the state and of the gradients, then
// the new params are all-gathered.
#include <memory>

#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"
#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class Zero1 final : public TrainingStrategy {
 public:
  bool shards_optimizer_state() const override { return true; }
  Tree update_weights(const DeviceStep& step, const Tree& params) const override {
    return local_shard_tree(params, step.rank, step.num_devices);
  }
  Tree update_grads(const DeviceStep& step, Tree reduced) const override {
    return local_shard_tree(reduced, step.rank, step.num_devices);
  }
  Tree updated_params(const DeviceStep& step, Tree updated) const override {
    return tag_as(gather_tree(updated, step.abstract_params, step.axis_name), tags::parameters);
  }
  double model_state_bytes(double psi, double num_devices, double p, double g, double k) const override {
    return (p + g) * psi + k * psi / num_devices;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_zero1() {
  return std::make_unique<Zero1>();
}

}  // namespace spmdsim::models
