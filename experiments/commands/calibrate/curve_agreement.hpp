// Published points the simulation cannot tell apart: the same collective on the same preset, node count and
// ranks, with the same algorithm, at one size, given one simulated busbw. Where their measurements (other
// clusters, other benchmark settings) differ by more than a target allows, no prediction from these inputs
// meets the target at all of them: a floor under the error of `spmdsim calibrate --curves` that no model,
// fitted or derived, goes below.
#pragma once

#include <ostream>
#include <vector>

#include "commands/calibrate/curve_comparison.hpp"

namespace spmdsim::cli {

// The least |error| one prediction can have against every one of `published` (all > 0): the prediction
// 2 lo hi / (lo + hi) is (hi - lo) / (hi + lo) from both ends, and any other is further from one of them.
double least_common_error(const std::vector<double>& published);

// The most of `published` one prediction can be within `target` of. x is within it of v when
// x / (1 + target) <= v <= x / (1 - target): the values of a window whose largest is at most
// (1 + target) / (1 - target) times its least.
int most_within_one_prediction(std::vector<double> published, double target);

// Held-out points simulated alike, two or more at one size, with the curves they belong to.
struct AlikePoints {
  std::vector<const CurveComparison*> curves;
  double bytes = 0;
  double simulated = 0;           // B/s, the first point's (the others' to 1e-9)
  std::vector<double> published;  // B/s, one per curve
};

// The groups of held-out points of `comparisons` that share collective, preset, node count, ranks,
// algorithm, size and simulated busbw (to 1e-9), in the order of their first curve and size.
std::vector<AlikePoints> alike_points(const std::vector<CurveComparison>& comparisons);

// How many held-out points miss a target whatever is predicted for them: per group, its points less the
// most one prediction can meet; `large` counts the 5% target at >= 64 MiB, `every_size` the 15% one.
struct UnreachablePoints {
  int large = 0;
  int every_size = 0;
};
UnreachablePoints unreachable_points(const std::vector<AlikePoints>& groups);

// Reporters: the groups whose spread exceeds their target (console table; markdown paragraph and table).
void write_agreement_table(std::ostream& out, const std::vector<AlikePoints>& groups);
void write_agreement_markdown(std::ostream& out, const std::vector<AlikePoints>& groups);

}  // namespace spmdsim::cli
