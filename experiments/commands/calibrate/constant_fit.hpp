// Refits, for `spmdsim calibrate --fit`, the preset constants that published points were fitted to
// (published_busbw.csv's `fitted` column names the constant): the points simulated at candidate values of the
// constant, and the value with the least sum of squared relative busbw errors, beside the preset's own. So a
// fitted figure in the presets is what a command prints, and a change of the model that moves it shows.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli {

// A preset constant fitted to published points: its name as the data file's `fitted` column writes it, its
// preset, its unit, and how to read it from a preset and set it on a copy.
struct FittableConstant {
  std::string_view name;  // "mi300x_8gpu MSCCL channel rate"
  std::string_view preset;
  std::string_view unit;  // "GB/s"
  double unit_value = 1;  // one unit in SI: 1e9 for GB/s
  double (*value)(const topologies::NodePreset&);
  void (*set)(topologies::NodePreset&, double);
};

const std::vector<FittableConstant>& fittable_constants();
// The constant named `name`; throws std::invalid_argument listing the fittable ones otherwise.
const FittableConstant& fittable_constant(std::string_view name);

// The least of f over [lo, hi] by grid refinement: f at `points` evenly spaced values (ends included), then
// again over the two intervals beside the least of them, `levels` times in all. f takes a batch of values
// and returns f of each, so a level's values can be simulated side by side. For a function unimodal around
// its least, exact to half the last grid's spacing, (hi - lo) x 2^(levels - 1) / (points - 1)^levels / 2.
struct GridMinimum {
  double at = 0;
  double value = 0;
  std::vector<std::pair<double, double>> first_level;  // (x, f(x)) of the first grid
};
GridMinimum grid_minimum(const std::function<std::vector<double>(const std::vector<double>&)>& f, double lo,
                         double hi, int points, int levels);

struct ConstantFit {
  const FittableConstant* constant = nullptr;
  int points = 0;  // the published points fitted to it
  int curves = 0;  // the curves they belong to
  GridMinimum minimum;
  double preset_value = 0;        // in the constant's unit
  double preset_sum_squares = 0;  // at the preset's value
};

// Fits `constant` to its points: each candidate value's points simulated with `nccl` (as --curves simulates
// them by default) in child processes, up to `parallel` at once, over [0.5, 1.5] x the preset's value.
ConstantFit fit_constant(const FittableConstant& constant, const std::vector<std::string>& simgrid_args,
                         int parallel);

// Reporter: per constant, its first grid, the fit and the preset's value with their sums of squares.
void write_fit_table(std::ostream& out, const std::vector<ConstantFit>& fits);

}  // namespace spmdsim::cli
