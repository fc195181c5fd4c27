// Whole published curves beside the simulation: each point of a published curve (published_curves.hpp)
// simulated on the curve's preset and node count with one algorithm, and the errors, for `spmdsim calibrate
// --curves`. Nothing is fitted here: the presets' constants come from their own calibration (calibration.hpp,
// one node, ring, 1-16 GiB) and from the fits to the points the data file marks (constant_fit.hpp); every
// other point is held out.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "commands/calibrate/published_curves.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli {

// The comparison's targets: |error| <= 5% at >= 64 MiB, <= 15% at every size.
inline constexpr double kLargeFromBytes = 64.0 * (1 << 20);
inline constexpr double kLargeTarget = 0.05;
inline constexpr double kEverySizeTarget = 0.15;

// A size as the tables print it: "64 MiB", "512 KiB", "8 B".
std::string size_text(double bytes);

// nccl-tests' busbw factor of a collective on n ranks (REFERENCES §2.1): 2(n-1)/n for all_reduce, (n-1)/n for
// all_gather and reduce_scatter.
double busbw_factor(const std::string& collective, int n);

// The algorithm that simulates `curve` when `requested` is asked for: like for like, `nccl` becomes
// `nccl_ring` on curves NCCL ran as Ring throughout ("Ring" or "Ring (...)": NCCL_ALGO=Ring, NVLS disabled,
// or Ring chosen) and `nvls_tree` on curves it ran as NVLSTree ("NVLSTree (forced)"); on a preset without
// NCCL's figures (RCCL's MI300X) `nccl` becomes the preset's default; anything else as is.
std::string curve_algorithm(const PublishedCurve& curve, const std::string& requested);

// The simulated busbw (B/s) of each of the curve's points: its collective on float32 shapes (abstract), on
// `preset` (the curve's, or a copy with a constant changed: constant_fit.hpp; one node, or the curve's nodes
// rail-optimised) under the preset's network model, with `algorithm`; settings in `simgrid_args` take
// precedence. Creates the process's one SimGrid engine.
std::vector<double> simulate_curve(const PublishedCurve& curve, const topologies::NodePreset& preset,
                                   const std::string& algorithm,
                                   const std::vector<std::string>& simgrid_args);

struct CurveComparison {
  const PublishedCurve* curve = nullptr;
  std::string algorithm;
  std::vector<double> simulated;  // B/s, one per point
};

// Errors (simulated - published) / published; the largest |error| among points of at least `from_bytes`
// (0 when there is none).
double relative_error(double simulated, double published);
double largest_error(const CurveComparison& c, double from_bytes);

// Reporters: one table per curve with a summary line (console), and the same as markdown.
void write_curve_table(std::ostream& out, const std::vector<CurveComparison>& comparisons);
void write_curve_markdown(std::ostream& out, const std::vector<CurveComparison>& comparisons);

}  // namespace spmdsim::cli
