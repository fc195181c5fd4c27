// `spmdsim memory --fit`: the largest value that still fits, found with as few runs as the search allows.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

namespace spmdsim::cli {

struct FitBounds {
  std::optional<std::int64_t> largest;        // the largest value that fitted; none: 1 does not fit
  std::optional<std::int64_t> first_failing;  // largest + 1, which did not; none: `max` fits
  int runs = 0;                               // calls of `fits`
};

// The largest value in [1, max] for which `fits` holds, assuming it holds up to some value and fails above
// (memory grows with the batch and with the layers). It tries 1, 2, 4, ... until a value fails or `max` is
// reached, then bisects between the last value that fitted and the first that failed: about 2 log2(answer)
// runs. Each value is tried at most once.
FitBounds search_largest_fit(std::int64_t max, const std::function<bool(std::int64_t)>& fits);

}  // namespace spmdsim::cli
