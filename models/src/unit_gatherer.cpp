#include "unit_gatherer.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace spmdsim::models {

UnitGatherer::UnitGatherer(const std::vector<int>& order, int passes,
                           const std::vector<std::int64_t>& unit_elements, int wrap_units,
                           PrefetchLimits limits, Start start, Finish finish)
    : limits_(limits), start_(std::move(start)), finish_(std::move(finish)) {
  const int units = static_cast<int>(unit_elements.size());
  const int per_wrap = wrap_units == 0 ? units : wrap_units;
  for (int u = 0; u < units; ++u) {
    const auto wrap = static_cast<std::size_t>(u / per_wrap);
    if (wrap == wraps_.size()) {
      wraps_.emplace_back();
      wrap_elements_.push_back(0);
    }
    wraps_[wrap].push_back(u);
    wrap_elements_[wrap] += unit_elements[static_cast<std::size_t>(u)];
    wrap_of_unit_.push_back(wrap);
  }
  // A run is what one gather serves: consecutive fetches of one wrap unit, each of its fetch units once (a
  // unit fetched again, as the backward fetches the forward's last, is gathered again: FULL_SHARD reshards
  // after the forward).
  std::vector<int> in_run;
  for (int p = 0; p < passes; ++p)
    for (int unit : order) {
      const std::size_t wrap = wrap_of_unit_.at(static_cast<std::size_t>(unit));
      if (runs_.empty() || runs_.back() != wrap ||
          std::find(in_run.begin(), in_run.end(), unit) != in_run.end()) {
        runs_.push_back(wrap);
        in_run.clear();
      }
      in_run.push_back(unit);
      fetches_.push_back(unit);
      run_of_fetch_.push_back(runs_.size() - 1);
    }
}

Tree UnitGatherer::fetch(int unit) {
  if (next_ >= fetches_.size() || fetches_[next_] != unit)
    throw std::logic_error(
        fmt::format("the pass fetched unit {} where its declared fetch order has {}", unit,
                    next_ < fetches_.size() ? fmt::to_string(fetches_[next_]) : "no more"));
  const std::size_t run = run_of_fetch_[next_++];
  const std::vector<int>& wrap = wraps_[runs_[run]];
  if (held_run_ != run) {
    held_.clear();
    PendingTree gather = ahead_.empty() ? start_(wrap) : std::move(ahead_.front().gather);
    if (!ahead_.empty()) ahead_.pop_front();
    // The next gathers go on the stream before this one is waited for, as FSDP issues the prefetch ahead of
    // the current unit's compute.
    prefetch(run);
    const Tree gathered = gather.wait();
    for (std::size_t i = 0; i < wrap.size(); ++i) held_.push_back(finish_(wrap[i], gathered[i]));
    held_run_ = run;
  }
  Tree params = held_.at(static_cast<std::size_t>(unit - wrap.front()));
  if (next_ == fetches_.size() ||
      run_of_fetch_[next_] != run) {  // the run's last fetch: hand everything over
    held_.clear();
    held_run_.reset();
  }
  return params;
}

void UnitGatherer::prefetch(std::size_t current) {
  std::int64_t in_flight = 0;
  for (const InFlight& f : ahead_) in_flight += elements(f.run);
  while (static_cast<int>(ahead_.size()) < limits_.units && in_flight < limits_.elements) {
    const std::size_t run = current + 1 + ahead_.size();
    if (run >= runs_.size()) return;
    if (elements(current) + in_flight + elements(run) > limits_.max_live) return;
    ahead_.push_back({run, start_(wraps_[runs_[run]])});
    in_flight += elements(run);
  }
}

}  // namespace spmdsim::models
