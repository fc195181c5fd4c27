#include "commands/memory/fit_search.hpp"

#include <algorithm>

namespace spmdsim::cli {

FitBounds search_largest_fit(std::int64_t max, const std::function<bool(std::int64_t)>& fits) {
  FitBounds bounds;
  const auto run = [&](std::int64_t value) {
    ++bounds.runs;
    const bool fitted = fits(value);
    (fitted ? bounds.largest : bounds.first_failing) = value;
    return fitted;
  };
  std::int64_t value = 1;
  while (run(value) && value < max) value = std::min(2 * value, max);
  if (!bounds.largest || !bounds.first_failing) return bounds;  // none fits, or max fits
  // Every run below moves one end inwards, so the ends stay the last fit and the first failure.
  while (*bounds.first_failing - *bounds.largest > 1)
    run(*bounds.largest + (*bounds.first_failing - *bounds.largest) / 2);
  return bounds;
}

}  // namespace spmdsim::cli
