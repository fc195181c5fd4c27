// Batches put on the devices ahead of the step, as flax.jax_utils.prefetch_to_device(iterator, size) keeps
// them: before step k the host puts every batch up to k + size (TrainStep::put_batch, an asynchronous
// device_put), so batch k's transfer overlaps the steps before it and step k waits only for what has not yet
// arrived. Each device holds the batch in use and up to `size` more.
#pragma once

#include <deque>
#include <functional>
#include <utility>

#include "spmdsim/array.hpp"
#include "spmdsim/models/data_parallel.hpp"

namespace spmdsim::models {

class BatchPrefetcher {
 public:
  // `batch(k)`: step k's batch on the host, as the step takes it. `size` 0: no prefetching, each batch goes
  // with its step's call. Throws ValueError for a negative size.
  BatchPrefetcher(Simulation& sim, const TrainStep& step, std::function<std::pair<Array, Array>(int)> batch,
                  int steps, int size);

  // The next step's batch (steps in order, 0 first): device-resident when prefetching, else the host's.
  std::pair<Array, Array> next();

 private:
  Simulation& sim_;
  const TrainStep& step_;
  std::function<std::pair<Array, Array>(int)> batch_;
  int steps_;
  int size_;
  int next_step_ = 0;
  int next_put_ = 0;
  std::deque<std::pair<Array, Array>> in_flight_;  // put, not yet handed out, oldest first
};

}  // namespace spmdsim::models
