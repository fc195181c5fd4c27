// Plain data parallelism, the hooks' defaults.
#include "training_strategy.hpp"

#include <stdexcept>

#include "spmdsim/collectives.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"

namespace spmdsim::models {

std::vector<GradientBucket> TrainingStrategy::gradient_buckets(const std::vector<Bytes>& /*leaf_bytes*/,
                                                               Bytes /*itemsize*/,
                                                               const TrainOptions& /*options*/) const {
  return {};
}

BucketResult TrainingStrategy::start_bucket(const DeviceStep& /*step*/, std::vector<Array> /*grads*/) const {
  throw std::logic_error("a strategy without gradient buckets was asked to reduce one");
}

PendingTree TrainingStrategy::start_gather(const DeviceStep& /*step*/, const std::vector<int>& /*units*/,
                                           const Tree& /*params*/) const {
  throw std::logic_error("a strategy with whole params was asked to gather them");
}

Tree TrainingStrategy::gathered_unit(const DeviceStep& /*step*/, std::size_t /*unit*/, Tree gathered) const {
  return gathered;
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
