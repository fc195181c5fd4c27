#include "collectives/selection.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace spmdsim::collectives {
namespace {

template <class AlgorithmT>
std::string_view cheapest(std::span<const AlgorithmT> table, const CostInputs& c) {
  std::string_view best;
  double best_time = std::numeric_limits<double>::infinity();
  for (const auto& algorithm : table) {
    if (!algorithm.accepts(c.p) || algorithm.platform_bound) continue;
    const double t = algorithm.cost(c);
    if (t < best_time) {
      best_time = t;
      best = algorithm.name;
    }
  }
  if (best.empty()) throw std::logic_error("no registered algorithm accepts this device count");
  return best;
}

}  // namespace

double reduction_seconds_per_byte(const DeviceSpec& spec, DType dtype) {
  const double item = static_cast<double>(itemsize(dtype));
  return std::max(kReductionFlopsPerElement / (item * spec.peak_flops_for(dtype)),
                  kReductionMemoryPassesPerByte / spec.memory_bandwidth);
}

std::string_view choose_algorithm(CollectiveKind kind, const CostInputs& c) {
  switch (kind) {
    case CollectiveKind::all_reduce: return cheapest(all_reduce_algorithms(), c);
    case CollectiveKind::all_gather: return cheapest(all_gather_algorithms(), c);
    case CollectiveKind::reduce_scatter: return cheapest(reduce_scatter_algorithms(), c);
    case CollectiveKind::all_to_all: return cheapest(all_to_all_algorithms(), c);
    case CollectiveKind::broadcast: return cheapest(broadcast_algorithms(), c);
    case CollectiveKind::reduce: return cheapest(reduce_algorithms(), c);
  }
  throw std::logic_error("unreachable collective kind");
}

}  // namespace spmdsim::collectives
