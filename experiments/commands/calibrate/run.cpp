#include "commands/calibrate/run.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "commands/calibrate/calibration.hpp"
#include "commands/calibrate/constant_fit.hpp"
#include "commands/calibrate/curve_agreement.hpp"
#include "commands/calibrate/curve_comparison.hpp"
#include "commands/calibrate/options.hpp"
#include "common/command_line.hpp"
#include "common/forked_run.hpp"
#include "common/output_files.hpp"

namespace spmdsim::cli::calibrate {
namespace {

using topologies::NodePreset;

// SimGrid keeps one engine per process, so each simulation runs in a child process of its own, which hands
// back one line per point: "<bytes> <time> <busbw>".
std::vector<CalibrationPoint> simulate_in_child(const NodePreset& preset, double link_scale,
                                                const std::vector<std::string>& simgrid_args) {
  const std::string text = run_in_child(fmt::format("calibrating {}", preset.name), [&] {
    std::string lines;
    for (const auto& p : simulate_calibration(preset, link_scale, simgrid_args))
      lines += fmt::format("{:.17g} {:.17g} {:.17g}\n", p.bytes, p.time, p.busbw);
    return lines;
  });
  std::vector<CalibrationPoint> points;
  std::istringstream in(text);
  for (CalibrationPoint p; in >> p.bytes >> p.time >> p.busbw;) points.push_back(p);
  if (points.size() != preset.calibration->sizes.size())
    throw std::runtime_error(fmt::format("calibrating {}: expected {} results, got {}", preset.name,
                                         preset.calibration->sizes.size(), points.size()));
  return points;
}

// The curve's simulated busbw, one "%.17g" line per point, from a child process.
std::vector<double> simulate_curve_in_child(const PublishedCurve& curve, const std::string& algorithm,
                                            const std::vector<std::string>& simgrid_args) {
  const std::string text =
      run_in_child(fmt::format("simulating {} x {} {}", curve.nodes, curve.preset, curve.collective), [&] {
        std::string lines;
        for (double busbw :
             simulate_curve(curve, topologies::node_preset(curve.preset), algorithm, simgrid_args))
          lines += fmt::format("{:.17g}\n", busbw);
        return lines;
      });
  std::vector<double> busbw;
  std::istringstream in(text);
  for (double b; in >> b;) busbw.push_back(b);
  if (busbw.size() != curve.points.size())
    throw std::runtime_error(fmt::format("simulating {}: expected {} results, got {}", curve.system,
                                         curve.points.size(), busbw.size()));
  return busbw;
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  OutputFiles outputs({{"--write-docs", parsed->docs_path}});
  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  std::vector<CalibrationResult> results;
  for (const auto* preset : parsed->presets) {
    auto points = simulate_in_child(*preset, 1.0, simgrid_args);
    auto doubled = simulate_in_child(*preset, 2.0, simgrid_args);
    results.push_back(make_result(*preset, calibration_settings(*preset, simgrid_args), std::move(points),
                                  std::move(doubled)));
  }
  write_calibration_table(std::cout, results);
  std::vector<CurveComparison> curves;
  std::vector<AlikePoints> alike;
  if (parsed->curves) {
    for (const auto& curve : published_curves()) {
      const std::string algorithm = curve_algorithm(curve, parsed->curve_algorithm);
      curves.push_back({&curve, algorithm, simulate_curve_in_child(curve, algorithm, simgrid_args)});
    }
    write_curve_table(std::cout, curves);
    alike = alike_points(curves);
    write_agreement_table(std::cout, alike);
  }
  if (parsed->fit) {
    std::vector<ConstantFit> fits;
    const int parallel = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (const auto& constant : fittable_constants())
      fits.push_back(fit_constant(constant, simgrid_args, parallel));
    write_fit_table(std::cout, fits);
  }
  if (!parsed->docs_path.empty()) {
    outputs.write(parsed->docs_path, [&](std::ostream& out) {
      write_calibration_markdown(out, results);
      if (curves.empty()) return;
      write_curve_markdown(out, curves);
      write_agreement_markdown(out, alike);
    });
    outputs.commit();
    std::cout << fmt::format("\n# wrote {}\n", parsed->docs_path);
  }
  return 0;
}

}  // namespace spmdsim::cli::calibrate
