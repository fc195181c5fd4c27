// Plain data parallelism, the hooks' defaults.
#include "training_strategy.hpp"

#include "spmdsim/collectives.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"

namespace spmdsim::models {

std::vector<GradientBucket> TrainingStrategy::gradient_buckets(const std::vector<Bytes>& /*leaf_bytes*/,
                                                               Bytes /*cap*/) const {
  return {};
}

Tree TrainingStrategy::fetch(const DeviceStep& /*step*/, std::size_t unit, const Tree& params) const {
  return params[unit];
}

Tree TrainingStrategy::reduce(const DeviceStep& step, Tree grads) const {
  return tag_as(pmean(grads, step.axis_name), tags::gradients);
}

Tree TrainingStrategy::update_weights(const DeviceStep& /*step*/, const Tree& params) const {
  return params;
}

Tree TrainingStrategy::update_grads(const DeviceStep& /*step*/, Tree reduced) const {
  return reduced;
}

Tree TrainingStrategy::updated_params(const DeviceStep& /*step*/, Tree updated) const {
  return updated;
}

}  // namespace spmdsim::models
