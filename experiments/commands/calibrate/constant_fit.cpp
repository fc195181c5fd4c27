#include "commands/calibrate/constant_fit.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands/calibrate/curve_comparison.hpp"
#include "commands/calibrate/published_curves.hpp"
#include "common/forked_run.hpp"

namespace spmdsim::cli {
namespace {

using topologies::NodePreset;

// The published curves with points fitted to `constant`, each holding those points only.
std::vector<PublishedCurve> fitted_curves(const FittableConstant& constant) {
  std::vector<PublishedCurve> curves;
  for (const auto& curve : published_curves()) {
    PublishedCurve fitted = curve;
    std::erase_if(fitted.points, [&](const PublishedPoint& p) { return p.fitted != constant.name; });
    if (!fitted.points.empty()) curves.push_back(std::move(fitted));
  }
  return curves;
}

// The sum over `curve`'s points of the squared relative errors of their busbw simulated on `preset` with
// `nccl`, what runs the presets' collectives by default, with which the constants were fitted.
double sum_of_squares(const PublishedCurve& curve, const NodePreset& preset,
                      const std::vector<std::string>& simgrid_args) {
  const auto busbw = simulate_curve(curve, preset, curve_algorithm(curve, "nccl"), simgrid_args);
  double sum = 0;
  for (std::size_t i = 0; i < busbw.size(); ++i) {
    const double error = relative_error(busbw[i], curve.points[i].busbw);
    sum += error * error;
  }
  return sum;
}

}  // namespace

const std::vector<FittableConstant>& fittable_constants() {
  static const std::vector<FittableConstant> constants = {
      {.name = "mi300x_8gpu MSCCL channel rate",
       .preset = "mi300x_8gpu",
       .unit = "GB/s",
       .unit_value = 1e9,
       .value = [](const NodePreset& p) { return p.rccl->msccl_channel_bandwidth; },
       .set = [](NodePreset& p, double v) { p.rccl->msccl_channel_bandwidth = v; }},
  };
  return constants;
}

const FittableConstant& fittable_constant(std::string_view name) {
  const auto& constants = fittable_constants();
  const auto it =
      std::find_if(constants.begin(), constants.end(), [&](const auto& c) { return c.name == name; });
  if (it != constants.end()) return *it;
  std::vector<std::string_view> names;
  for (const auto& c : constants) names.push_back(c.name);
  throw std::invalid_argument(
      fmt::format("no fittable constant '{}'; fittable: {}", name, fmt::join(names, ", ")));
}

GridMinimum grid_minimum(const std::function<std::vector<double>(const std::vector<double>&)>& f, double lo,
                         double hi, int points, int levels) {
  if (points < 3 || levels < 1 || !(lo < hi))
    throw std::invalid_argument("grid_minimum: at least 3 points, 1 level and lo < hi");
  GridMinimum minimum;
  for (int level = 0; level < levels; ++level) {
    std::vector<double> xs;
    for (int i = 0; i < points; ++i) xs.push_back(lo + (hi - lo) * i / (points - 1));
    const auto fs = f(xs);
    if (fs.size() != xs.size()) throw std::logic_error("grid_minimum: f must give one value per x");
    const auto least = static_cast<std::size_t>(std::min_element(fs.begin(), fs.end()) - fs.begin());
    if (level == 0 || fs[least] < minimum.value) {
      minimum.at = xs[least];
      minimum.value = fs[least];
    }
    if (level == 0)
      for (std::size_t i = 0; i < xs.size(); ++i) minimum.first_level.emplace_back(xs[i], fs[i]);
    lo = xs[least == 0 ? 0 : least - 1];
    hi = xs[std::min(least + 1, xs.size() - 1)];
  }
  return minimum;
}

ConstantFit fit_constant(const FittableConstant& constant, const std::vector<std::string>& simgrid_args,
                         int parallel) {
  const NodePreset& preset = topologies::node_preset(constant.preset);
  const auto curves = fitted_curves(constant);
  if (curves.empty())
    throw std::invalid_argument(fmt::format("no published point is fitted to the {}", constant.name));
  // The sum of squares over every curve at each value (in the constant's unit): one child per value and
  // curve.
  const auto sums = [&](const std::vector<double>& values) {
    std::vector<ChildRun> runs;
    for (double value : values)
      for (const auto& curve : curves)
        runs.push_back(
            {fmt::format("fitting the {} at {:g} {}", constant.name, value, constant.unit), [&, value] {
               NodePreset changed = preset;
               constant.set(changed, value * constant.unit_value);
               return fmt::format("{:.17g}", sum_of_squares(curve, changed, simgrid_args));
             }});
    std::vector<double> totals(values.size(), 0.0);
    const auto texts = run_in_children(runs, parallel, nullptr);
    for (std::size_t i = 0; i < texts.size(); ++i) totals[i / curves.size()] += std::stod(texts[i]);
    return totals;
  };
  ConstantFit fit{.constant = &constant, .curves = static_cast<int>(curves.size())};
  for (const auto& curve : curves) fit.points += static_cast<int>(curve.points.size());
  fit.preset_value = constant.value(preset) / constant.unit_value;
  fit.preset_sum_squares = sums({fit.preset_value}).front();
  fit.minimum = grid_minimum(sums, 0.5 * fit.preset_value, 1.5 * fit.preset_value, 21, 3);
  return fit;
}

void write_fit_table(std::ostream& out, const std::vector<ConstantFit>& fits) {
  out << "\n# spmdsim calibrate --fit: each constant published points were fitted to, fitted again: the sum\n"
         "# of squared relative busbw errors of its points (simulated with nccl, as --curves simulates\n"
         "# them) on a grid, refined twice around its least\n";
  for (const auto& fit : fits) {
    const auto& c = *fit.constant;
    out << fmt::format("\n# {} ({}), {} points of {} curve{}\n{:>10}  {:>14}\n", c.name, c.unit, fit.points,
                       fit.curves, fit.curves == 1 ? "" : "s", "value", "sum of squares");
    for (const auto& [value, sum] : fit.minimum.first_level)
      out << fmt::format("{:>10.3f}  {:>14.4f}\n", value, sum);
    out << fmt::format("# fit: {:.2f} {} (sum of squares {:.4f}); the preset: {:g} {} ({:.4f})\n",
                       fit.minimum.at, c.unit, fit.minimum.value, fit.preset_value, c.unit,
                       fit.preset_sum_squares);
  }
}

}  // namespace spmdsim::cli
