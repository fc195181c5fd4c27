#include "commands/calibrate/curve_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmdsim::cli {
namespace {

double target_at(double bytes) {
  return bytes >= kLargeFromBytes ? kLargeTarget : kEverySizeTarget;
}

bool simulated_alike(const CurveComparison& a, const CurveComparison& b) {
  return std::tie(a.curve->collective, a.curve->preset, a.curve->nodes, a.curve->devices, a.algorithm) ==
         std::tie(b.curve->collective, b.curve->preset, b.curve->nodes, b.curve->devices, b.algorithm);
}

// One prediction: each curve's points run one after another in one simulation, so the same call's time
// can differ in its last bits with the clock it starts at.
bool same_prediction(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// The groups whose published values are further apart than one prediction can meet at their target.
std::vector<const AlikePoints*> beyond_target(const std::vector<AlikePoints>& groups) {
  std::vector<const AlikePoints*> beyond;
  for (const auto& g : groups)
    if (least_common_error(g.published) > target_at(g.bytes)) beyond.push_back(&g);
  return beyond;
}

std::string published_text(const AlikePoints& g) {
  std::vector<double> gbps;
  for (double busbw : g.published) gbps.push_back(busbw / 1e9);
  return fmt::format("{:.2f}", fmt::join(gbps, ", "));
}

std::string systems_text(const AlikePoints& g) {
  std::vector<std::string_view> systems;
  for (const auto* c : g.curves) systems.push_back(c->curve->system);
  return fmt::format("{}", fmt::join(systems, "; "));
}

std::string configuration_text(const AlikePoints& g) {
  const auto& curve = *g.curves.front()->curve;
  return fmt::format("{} {}, {} x {}, {}", curve.collective, curve.preset, curve.nodes,
                     curve.devices / curve.nodes, g.curves.front()->algorithm);
}

std::string unreachable_text(const std::vector<AlikePoints>& groups) {
  const auto [large, every_size] = unreachable_points(groups);
  return fmt::format(
      "at least {} of the held-out points at >= 64 MiB miss 5%, and {} at every size miss 15%, whatever "
      "is predicted",
      large, every_size);
}

}  // namespace

double least_common_error(const std::vector<double>& published) {
  if (published.empty()) throw std::invalid_argument("least_common_error of no values");
  const auto [lo, hi] = std::minmax_element(published.begin(), published.end());
  if (!(*lo > 0)) throw std::invalid_argument("least_common_error of a value that is not positive");
  return (*hi - *lo) / (*hi + *lo);
}

int most_within_one_prediction(std::vector<double> published, double target) {
  if (!(target >= 0 && target < 1))
    throw std::invalid_argument(fmt::format("target {} is not in [0, 1)", target));
  std::sort(published.begin(), published.end());
  const double widest = (1 + target) / (1 - target);
  int most = 0;
  for (std::size_t first = 0, last = 0; last < published.size(); ++last) {
    while (published[last] > published[first] * widest) ++first;
    most = std::max(most, static_cast<int>(last - first + 1));
  }
  return most;
}

std::vector<AlikePoints> alike_points(const std::vector<CurveComparison>& comparisons) {
  std::vector<AlikePoints> groups;
  for (const auto& c : comparisons)
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& point = c.curve->points[i];
      if (!point.fitted.empty()) continue;
      auto group = std::find_if(groups.begin(), groups.end(), [&](const AlikePoints& g) {
        return g.bytes == point.bytes && same_prediction(g.simulated, c.simulated[i]) &&
               simulated_alike(*g.curves.front(), c);
      });
      if (group == groups.end()) group = groups.insert(groups.end(), {{}, point.bytes, c.simulated[i], {}});
      group->curves.push_back(&c);
      group->published.push_back(point.busbw);
    }
  std::erase_if(groups, [](const AlikePoints& g) { return g.curves.size() < 2; });
  return groups;
}

UnreachablePoints unreachable_points(const std::vector<AlikePoints>& groups) {
  UnreachablePoints count;
  for (const auto& g : groups) {
    const int points = static_cast<int>(g.published.size());
    count.every_size += points - most_within_one_prediction(g.published, kEverySizeTarget);
    if (g.bytes >= kLargeFromBytes)
      count.large += points - most_within_one_prediction(g.published, kLargeTarget);
  }
  return count;
}

void write_agreement_table(std::ostream& out, const std::vector<AlikePoints>& groups) {
  out << "\n# published points simulated alike (same collective, preset, nodes, ranks, algorithm and size) "
         "that disagree by more than the target: least |error| one prediction can have = (largest - least) / "
         "(largest + least)\n"
      << fmt::format("#{:<44}  {:>8}  {:>26}  {:>9}  {:>6}  {}\n", "curves", "size", "published (GB/s)",
                     "least err", "target", "systems");
  for (const auto* g : beyond_target(groups))
    out << fmt::format(" {:<44}  {:>8}  {:>26}  {:>8.1f}%  {:>5.0f}%  {}\n", configuration_text(*g),
                       size_text(g->bytes), published_text(*g), 100 * least_common_error(g->published),
                       100 * target_at(g->bytes), systems_text(*g));
  out << "# " << unreachable_text(groups) << "\n";
}

void write_agreement_markdown(std::ostream& out, const std::vector<AlikePoints>& groups) {
  out << "\n## Published curves that disagree\n\n"
      << "Some published curves are of configurations the simulation cannot tell apart: the same\n"
      << "collective on the same preset, node count and ranks, with the same algorithm, so one simulated\n"
      << "busbw per size. Measured on other clusters or with other benchmark settings (one process per\n"
      << "GPU or `-g 8`, graph launch), their values differ, and where they differ by more than a target\n"
      << "allows, no prediction meets it at all of them: the least |error| one prediction can have is\n"
      << "(largest - least) / (largest + least), and of m values at most those within a factor\n"
      << "(1 + target) / (1 - target) of each other can be met. So\n"
      << unreachable_text(groups) << "\n"
      << "(they are among the misses counted above). Where the spread exceeds the target:\n\n"
      << "| curves | size | published (GB/s) | least error of one prediction | target | systems |\n"
      << "|---|---:|---:|---:|---:|---|\n";
  for (const auto* g : beyond_target(groups))
    out << fmt::format("| {} | {} | {} | {:.1f}% | {:.0f}% | {} |\n", configuration_text(*g),
                       size_text(g->bytes), published_text(*g), 100 * least_common_error(g->published),
                       100 * target_at(g->bytes), systems_text(*g));
}

}  // namespace spmdsim::cli
