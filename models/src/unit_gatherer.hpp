// ZeRO-3 / FSDP parameter gathering inside the train step. The fetch units are grouped into wrap units
// (FSDP's FlatParameter: `wrap_units` consecutive fetch units; the whole model where it is 0). A wrap unit's
// params are all-gathered as one collective just before the pass uses its first fetch unit, kept while the
// pass works on its fetch units one after the other, and handed over with the last of them, keeping no
// reference, so they are freed as soon as the pass is done with them; meanwhile the gathers of the next wrap
// units in the pass's fetch order are started on the device's communication stream (async_collectives.hpp),
// so they overlap the current one's compute.
//
// How far ahead (PrefetchLimits): at most `units` wrap units, and a further one only while the elements being
// prefetched are fewer than `elements` (DeepSpeed's stage3_prefetch_bucket_size: its loop starts one more
// fetch while the numel in flight is below it) and the gathered elements, the wrap unit in use included, stay
// within `max_live` (stage3_max_live_parameters). The first gather of a step has nothing to hide behind
// ("The 1st all-gather will not be able to overlap with anything", PyTorch's FSDP notes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

struct PrefetchLimits {
  int units = 1;
  std::int64_t elements = 0;
  std::int64_t max_live = 0;
};

class UnitGatherer {
 public:
  // Starts gathering the params of these fetch units (one wrap unit) as one collective.
  using Start = std::function<PendingTree(const std::vector<int>& units)>;
  // A fetch unit's params, from its part of the gathered wrap unit.
  using Finish = std::function<Tree(int unit, Tree gathered)>;

  // order: the fetch units the pass fetches, in order, repeated `passes` times (one per micro-batch);
  // unit_elements[u]: fetch unit u's parameter count; wrap_units: fetch units per wrap unit (0: all).
  UnitGatherer(const std::vector<int>& order, int passes, const std::vector<std::int64_t>& unit_elements,
               int wrap_units, PrefetchLimits limits, Start start, Finish finish);

  // Fetch unit `unit`'s gathered params, as finish() makes them. Throws std::logic_error when the pass
  // fetches other units, or in another order, than it declared.
  Tree fetch(int unit);

 private:
  struct InFlight {
    std::size_t run;  // index in runs_
    PendingTree gather;
  };
  std::int64_t elements(std::size_t run) const { return wrap_elements_.at(runs_.at(run)); }
  void prefetch(std::size_t current);

  std::vector<int> fetches_;                 // the step's fetch units, in order
  std::vector<std::size_t> run_of_fetch_;    // each fetch's run: consecutive fetches of one wrap unit
  std::vector<std::size_t> runs_;            // each run's wrap unit
  std::vector<std::vector<int>> wraps_;      // each wrap unit's fetch units
  std::vector<std::int64_t> wrap_elements_;  // each wrap unit's parameter count
  std::vector<std::size_t> wrap_of_unit_;
  PrefetchLimits limits_;
  Start start_;
  Finish finish_;
  std::size_t next_ = 0;        // the next fetch
  std::deque<InFlight> ahead_;  // started gathers of the runs after the held one
  std::optional<std::size_t> held_run_;
  std::vector<Tree> held_;  // the held run's gathered fetch units, by position in its wrap unit
};

}  // namespace spmdsim::models
