#include "spmdsim/models/batch_prefetcher.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::models {

BatchPrefetcher::BatchPrefetcher(Simulation& sim, const TrainStep& step,
                                 std::function<std::pair<Array, Array>(int)> batch, int steps, int size)
    : sim_(sim), step_(step), batch_(std::move(batch)), steps_(steps), size_(size) {
  if (size < 0) throw ValueError(fmt::format("prefetch size must be 0 or more, got {}", size));
}

std::pair<Array, Array> BatchPrefetcher::next() {
  if (next_step_ >= steps_)
    throw std::logic_error(fmt::format("all {} steps' batches were handed out", steps_));
  const int step = next_step_++;
  if (size_ == 0) return batch_(step);
  for (; next_put_ <= step + size_ && next_put_ < steps_; ++next_put_) {
    const auto [x, y] = batch_(next_put_);
    in_flight_.push_back(step_.put_batch(sim_, x, y));
  }
  auto oldest = std::move(in_flight_.front());
  in_flight_.pop_front();
  return oldest;
}

}  // namespace spmdsim::models
