#include "bucket_reducer.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace spmdsim::models {

BucketReducer::BucketReducer(const std::vector<GradientBucket>& buckets,
                             const std::vector<std::size_t>& unit_offsets, Start start)
    : buckets_(buckets), unit_offsets_(unit_offsets), start_(std::move(start)), ready_(unit_offsets.back()) {}

void BucketReducer::add(int unit, const Tree& grads) {
  std::size_t index = unit_offsets_.at(static_cast<std::size_t>(unit));
  for (const Array& leaf : grads.leaves()) ready_.at(index++) = leaf;
  if (index != unit_offsets_.at(static_cast<std::size_t>(unit) + 1))
    throw std::logic_error("a unit's gradients do not match its parameters");
  start_complete_buckets();
}

// Buckets complete in order, as the gradients come last first.
void BucketReducer::start_complete_buckets() {
  while (pending_.size() < buckets_.size()) {
    const GradientBucket& bucket = buckets_[pending_.size()];
    const bool complete = std::all_of(bucket.leaves.begin(), bucket.leaves.end(),
                                      [this](std::size_t i) { return ready_[i].has_value(); });
    if (!complete) return;
    std::vector<Array> grads;
    for (std::size_t i : bucket.leaves) grads.push_back(*std::exchange(ready_[i], std::nullopt));
    pending_.push_back(start_(std::move(grads)));
  }
}

std::vector<Array> BucketReducer::finish() {
  if (pending_.size() != buckets_.size())
    throw std::logic_error("the backward pass left gradient buckets unfilled");
  std::vector<Array> grads(ready_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    std::vector<Array> parts = std::exchange(pending_[b], nullptr)();
    for (std::size_t j = 0; j < parts.size(); ++j) grads[buckets_[b].leaves[j]] = std::move(parts[j]);
  }
  return grads;
}

}  // namespace spmdsim::models
