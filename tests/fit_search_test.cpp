// The search behind `spmdsim memory --fit` (experiments/commands/memory/fit_search.hpp), on predicates whose
// answer is known: the value it finds, the next one, and the runs it takes.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "commands/memory/fit_search.hpp"

namespace spmdsim::cli {
namespace {

// The search on "fits up to `limit`", with every value it tried.
struct Traced {
  FitBounds bounds;
  std::vector<std::int64_t> tried;
};
Traced search_up_to(std::int64_t limit, std::int64_t max) {
  Traced traced;
  traced.bounds = search_largest_fit(max, [&](std::int64_t value) {
    traced.tried.push_back(value);
    return value <= limit;
  });
  return traced;
}

TEST(FitSearch, DoublesThenBisects) {
  const auto t = search_up_to(37, 4096);
  EXPECT_EQ(t.bounds.largest, 37);
  EXPECT_EQ(t.bounds.first_failing, 38);
  EXPECT_EQ(t.tried, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
  EXPECT_EQ(t.bounds.runs, 12);
}

TEST(FitSearch, APowerOfTwo) {
  const auto t = search_up_to(32, 4096);
  EXPECT_EQ(t.bounds.largest, 32);
  EXPECT_EQ(t.bounds.first_failing, 33);
  EXPECT_EQ(t.tried, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 34, 33}));
}

TEST(FitSearch, NothingFits) {
  const auto t = search_up_to(0, 4096);
  EXPECT_EQ(t.bounds.largest, std::nullopt);
  EXPECT_EQ(t.bounds.first_failing, 1);
  EXPECT_EQ(t.bounds.runs, 1);
}

TEST(FitSearch, TheBoundFits) {
  const auto t = search_up_to(1000, 100);
  EXPECT_EQ(t.bounds.largest, 100);
  EXPECT_EQ(t.bounds.first_failing, std::nullopt);
  EXPECT_EQ(t.tried, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 100}));
}

TEST(FitSearch, TheAnswerJustBelowTheBound) {
  const auto t = search_up_to(99, 100);
  EXPECT_EQ(t.bounds.largest, 99);
  EXPECT_EQ(t.bounds.first_failing, 100);
}

TEST(FitSearch, EveryAnswerUpToTheBoundIsFoundExactly) {
  for (std::int64_t limit = 1; limit <= 130; ++limit) {
    const auto t = search_up_to(limit, 128);
    EXPECT_EQ(t.bounds.largest, std::min<std::int64_t>(limit, 128)) << limit;
    EXPECT_EQ(t.bounds.first_failing, limit < 128 ? std::optional<std::int64_t>(limit + 1) : std::nullopt) << limit;
  }
}

}  // namespace
}  // namespace spmdsim::cli
