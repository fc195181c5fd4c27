// zero2, ZeRO stage 2 (P_os+g): as zero1, but the gradients are reduce-scattered bucket by bucket during the
// backward pass (sharded_gradients.hpp), so each device keeps only its shard of the averaged gradients and,
// of the full-size ones, the buckets in flight.
#include <memory>

#include "sharded_gradients.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"

namespace spmdsim::models {
namespace {

class Zero2 final : public ShardedGradients {
 public:
  Tree update_weights(const DeviceStep& step, const Tree& params) const override {
    return local_shard_tree(params, step.rank, step.num_devices);
  }
  Tree updated_params(const DeviceStep& step, Tree updated) const override {
    return tag_as(gather_tree(updated, step.abstract_params, step.axis_name), tags::parameters);
  }
  double model_state_bytes(double psi, double num_devices, double p, double g, double k) const override {
    return p * psi + (g + k) * psi / num_devices;
  }
};

}  // namespace

std::unique_ptr<TrainingStrategy> make_zero2() {
  return std::make_unique<Zero2>();
}

}  // namespace spmdsim::models
