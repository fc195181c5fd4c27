// zero3, ZeRO stage 3 (P_os+g+p): params sharded too. Each unit's params are all-gathered (the unit's leaves
// as one collective, FSDP's flat parameter, each to its full shape) just before its forward and again before
// its backward, and freed right after; the gradients are reduce-scattered; each device updates its own shard
// and nothing is gathered after the update.
#include <memory>

#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"
#include "training_strategy.hpp"

namespace spmdsim::models {
namespace {

class Zero3 final : public TrainingStrategy {
 public:
  bool shards_params() const override { return true; }
  bool shards_optimizer_state() const override { return true; }
  Tree fetch(const DeviceStep& step, std::size_t unit, const Tree& params) const override {
    return tag_as(gather_tree(params[unit], step.abstract_params[unit], step.axis_name), tags::parameters);
  }
  Tree reduce(const DeviceStep& step, Tree grads) const override {
    return tag_as(mean_scatter_tree(grads, step.axis_name, step.num_devices), tags::gradients);
  }
  double model_state_bytes(double psi, double num_devices) const override { return 16 * psi / num_devices; }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_zero3() {
  return std::make_unique<Zero3>();
}

}  // namespace spmdsim::models
