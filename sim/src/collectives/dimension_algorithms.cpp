// The per-dimension choices of the multidim all-reduce (ASTRA-sim's "ring", "direct", "halvingDoubling"),
// each a pair of registered algorithms.
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

constexpr std::array kDimensionAlgorithms{
    DimensionAlgorithm{"ring", "ring", "ring"},
    DimensionAlgorithm{"direct", "direct", "direct"},
    DimensionAlgorithm{"halving_doubling", "recursive_halving", "recursive_doubling"},
};

}  // namespace

std::span<const DimensionAlgorithm> dimension_algorithms() { return kDimensionAlgorithms; }

std::vector<std::string_view> dimension_algorithm_names() {
  std::vector<std::string_view> names;
  for (const auto& a : kDimensionAlgorithms) names.push_back(a.name);
  return names;
}

void check_dimension_algorithms(const std::vector<std::string>& names, const std::vector<int>& dimensions) {
  if (names.size() != dimensions.size())
    throw ValueError(fmt::format("multidim over dimensions {{{}}} needs {} dimension algorithms, got {} ({})",
                                 fmt::join(dimensions, ", "), dimensions.size(), names.size(),
                                 fmt::join(names, ", ")));
  for (std::size_t d = 0; d < names.size(); ++d) {
    const DimensionAlgorithm* found = nullptr;
    for (const auto& a : kDimensionAlgorithms)
      if (a.name == names[d]) found = &a;
    if (!found)
      throw ValueError(fmt::format("unknown dimension algorithm '{}'; valid: {}", names[d],
                                   fmt::join(dimension_algorithm_names(), ", ")));
    const auto& reduce_scatter = find_reduce_scatter(found->reduce_scatter);
    const auto& all_gather = find_all_gather(found->all_gather);
    const std::string_view refused_by = !reduce_scatter.accepts(dimensions[d]) ? reduce_scatter.accepted_counts
                                        : !all_gather.accepts(dimensions[d])   ? all_gather.accepted_counts
                                                                               : std::string_view();
    if (!refused_by.empty())
      throw ValueError(fmt::format("dimension algorithm '{}' runs on {}, not on dimension {} of extent {}",
                                   names[d], refused_by, d, dimensions[d]));
  }
}

}  // namespace spmdsim
