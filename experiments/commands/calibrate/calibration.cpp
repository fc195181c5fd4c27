#include "commands/calibrate/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "common/simulation_start.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::cli {
namespace {

using topologies::NodePreset;

// nccl-tests' all-reduce busbw factor, REFERENCES §2.1.
double bus_factor(int n) {
  return 2.0 * (n - 1) / n;
}

std::string gib_text(double bytes) {
  return fmt::format("{:g} GiB", bytes / (1ull << 30));
}

std::string range_text(const topologies::CalibrationTarget& target) {
  if (target.busbw_low == target.busbw_high) return fmt::format("{:g}", target.busbw_low / 1e9);
  return fmt::format("{:g}-{:g}", target.busbw_low / 1e9, target.busbw_high / 1e9);
}

std::string percent(double fraction) {
  return fmt::format("{:+.1f}%", 100 * fraction);
}

std::string_view status_text(const topologies::CalibrationTarget& target) {
  return target.not_calibrated.empty() ? "calibrated" : "comparison";
}

std::string correction_text(double c) {
  return c > 0 ? fmt::format("{:.3f}", c) : std::string("unreachable");
}

double mean_correction(const CalibrationResult& r) {
  std::vector<double> reachable;
  for (double c : r.suggested_corrections)
    if (c > 0) reachable.push_back(c);
  if (reachable.size() != r.suggested_corrections.size() || reachable.empty()) return 0;
  return std::accumulate(reachable.begin(), reachable.end(), 0.0) / static_cast<double>(reachable.size());
}

}  // namespace

std::vector<std::string> calibration_settings(const NodePreset& preset,
                                              const std::vector<std::string>& simgrid_args) {
  auto settings = settings_not_overridden(preset.network_model->simgrid_config, simgrid_args);
  const auto given = cfg_settings(simgrid_args);
  settings.insert(settings.end(), given.begin(), given.end());
  return settings;
}

std::vector<CalibrationPoint> simulate_calibration(const NodePreset& preset, double link_scale,
                                                   const std::vector<std::string>& simgrid_args) {
  if (!preset.calibration)
    throw std::invalid_argument(fmt::format("node preset '{}' has no calibration target", preset.name));
  const auto& target = *preset.calibration;
  topologies::NodeSpec spec = preset.spec();
  spec.device_link.bandwidth *= link_scale;

  std::vector<std::string> argv = {"spmdsim"};
  argv.insert(argv.end(), simgrid_args.begin(), simgrid_args.end());
  const auto simulation = start_simulation(topologies::accelerator_node(spec),
                                           preset.network_model->simgrid_config, std::move(argv));
  Simulation& sim = *simulation;

  const int n = sim.num_devices();
  const CollectiveOptions collective{.algorithm = std::string(target.algorithm)};
  auto all_reduce = pmap([&](const Args& a) -> Tree { return psum(a[0].array(), "i", {}, collective); },
                         {.axis_name = "i", .name = "calibration all-reduce"});
  std::vector<CalibrationPoint> points;
  for (double bytes : target.sizes) {
    const auto elements = static_cast<std::int64_t>(bytes / static_cast<double>(itemsize(DType::f32)));
    all_reduce(sim, {Array::abstract({n, elements}, DType::f32)});
    const auto report = sim.report();
    CalibrationPoint point{.bytes = static_cast<double>(elements) * itemsize(DType::f32)};
    for (const auto& times : report.calls.back().times)
      if (auto it = times.communication.find("psum"); it != times.communication.end())
        point.time = std::max(point.time, it->second);
    if (!(point.time > 0)) throw std::logic_error("calibration: the all-reduce took no simulated time");
    point.busbw = point.bytes / point.time * bus_factor(n);
    points.push_back(point);
  }
  return points;
}

CalibrationResult make_result(const NodePreset& preset, std::vector<std::string> settings,
                              std::vector<CalibrationPoint> points, std::vector<CalibrationPoint> doubled) {
  CalibrationResult r{.preset = &preset,
                      .settings = std::move(settings),
                      .points = std::move(points),
                      .doubled = std::move(doubled)};
  const int n = preset.devices_per_node;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    // t = a + c / B: at B and 2B, c / B = 2 (t1 - t2) and a = 2 t2 - t1.
    const double t1 = r.points[i].time;
    const double t2 = r.doubled.at(i).time;
    const double link_time = 2 * (t1 - t2);
    const double other_time = 2 * t2 - t1;
    const double target_time = r.points[i].bytes * bus_factor(n) / preset.calibration->midpoint();
    r.suggested_corrections.push_back(target_time > other_time ? preset.model_correction.value * link_time /
                                                                     (target_time - other_time)
                                                               : 0.0);
  }
  return r;
}

double relative_error(const NodePreset& preset, const CalibrationPoint& point) {
  const double mid = preset.calibration->midpoint();
  return (point.busbw - mid) / mid;
}

void write_calibration_table(std::ostream& out, const std::vector<CalibrationResult>& results) {
  out << "# spmdsim calibrate: all-reduce busbw on each node preset's devices, simulated vs published\n"
      << "# busbw = S/t x 2(n-1)/n (nccl-tests); float32 on abstract arrays; error = (simulated - published "
         "midpoint)"
         " / midpoint;\n"
      << fmt::format("# tolerance {:.0f}%; sources are sections of REFERENCES.md\n",
                     100 * kCalibrationTolerance)
      << fmt::format("#{:<13} {:<9} {:>7} {:>11} {:>11} {:>8}  {:<10}  {}\n", "preset", "algorithm", "size",
                     "simulated", "published", "error", "status", "source")
      << fmt::format("#{:<13} {:<9} {:>7} {:>11} {:>11}\n", "", "", "", "(GB/s)", "(GB/s)");
  for (const auto& r : results) {
    const auto& target = *r.preset->calibration;
    for (const auto& p : r.points)
      out << fmt::format(" {:<13} {:<9} {:>7} {:>11.1f} {:>11} {:>8}  {:<10}  {}\n", r.preset->name,
                         target.algorithm, gib_text(p.bytes), p.busbw / 1e9, range_text(target),
                         percent(relative_error(*r.preset, p)), status_text(target), target.source);
  }
  for (const auto& r : results)
    if (!r.preset->calibration->not_calibrated.empty())
      out << fmt::format("# {} is not calibrated: {}\n", r.preset->name,
                         r.preset->calibration->not_calibrated);
  out << "\n# link calibration: simulated device link = achievable rate x model correction\n"
      << fmt::format("#{:<13} {:<12} {:>8} {:>11} {:>10} {:>10} {:>9} {:>11}\n", "preset", "device link",
                     "nominal", "achievable", "correction", "simulated", "x nominal", "to midpoint")
      << fmt::format("#{:<13} {:<12} {:>8} {:>11} {:>10} {:>10} {:>9} {:>11}\n", "", "", "(GB/s)", "(GB/s)",
                     "", "(GB/s)", "", "correction");
  for (const auto& r : results) {
    const auto& link = topologies::link_preset(r.preset->device_link);
    out << fmt::format(" {:<13} {:<12} {:>8g} {:>11g} {:>10g} {:>10.1f} {:>9.3f} {:>11}\n", r.preset->name,
                       link.name, link.bandwidth.value / 1e9, link.effective_spec().bandwidth / 1e9,
                       r.preset->model_correction.value, r.preset->effective_device_link().bandwidth / 1e9,
                       r.preset->calibration_factor(), correction_text(mean_correction(r)));
  }
  out << "\n# simgrid settings\n";
  for (const auto& r : results)
    out << fmt::format(" {:<13} {}\n", r.preset->name, fmt::join(r.settings, ", "));
}

void write_calibration_markdown(std::ostream& out, const std::vector<CalibrationResult>& results) {
  out << "# Calibration of the node presets\n\n"
      << "<!-- Generated by `spmdsim calibrate --curves --write-docs`; do not edit by hand. Change a preset "
         "in\n"
      << "     topologies/src/presets.cpp, then rerun the command. -->\n\n"
      << "Each node preset runs an all-reduce of float32 on its devices, on abstract arrays (shapes only), "
         "under\n"
      << "the preset's network model, and is compared with the published nccl-tests bus bandwidth\n"
      << "(busbw = S/t x 2(n-1)/n, REFERENCES.md §2.1). Error = (simulated - published midpoint) / "
         "midpoint;\n"
      << fmt::format(
             "tests/calibration_test.cpp holds every calibrated preset within {:.0f}%. Sources are sections "
             "and\n",
             100 * kCalibrationTolerance)
      << "provenance tags of REFERENCES.md. Why the model corrections exist, what the model leaves out and "
         "what\n"
      << "that costs: [presets.md](presets.md#calibration).\n\n"
      << "| preset | algorithm | S | simulated busbw (GB/s) | published busbw (GB/s) | error | status | "
         "source |\n"
      << "|---|---|---:|---:|---:|---:|---|---|\n";
  for (const auto& r : results) {
    const auto& target = *r.preset->calibration;
    for (const auto& p : r.points)
      out << fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {} | {} |\n", r.preset->name, target.algorithm,
                         gib_text(p.bytes), p.busbw / 1e9, range_text(target),
                         percent(relative_error(*r.preset, p)), status_text(target), target.source);
  }
  bool first = true;
  for (const auto& r : results)
    if (!r.preset->calibration->not_calibrated.empty()) {
      out << (first ? "\n" : "")
          << fmt::format("- **{}** is shown for comparison only, not calibrated: {}.\n", r.preset->name,
                         r.preset->calibration->not_calibrated);
      first = false;
    }
  out << "\n## Calibration factors\n\n"
      << "The simulated device link of a node is its link preset's achievable rate (NCCL's nvlBw x links "
         "for\n"
      << "NVLink, REFERENCES §1.8) times the preset's model correction. \"x nominal\" is the resulting "
         "calibration\n"
      << "factor against the vendor's per-direction figure. \"Correction to midpoint\" is the model "
         "correction that\n"
      << "would put the simulated busbw exactly on the published midpoint (mean over the sizes; from two "
         "runs, the\n"
      << "second with the link twice as fast, since the time is affine in 1 / link bandwidth).\n\n"
      << "| preset | device link | nominal (GB/s) | achievable (GB/s) | achievable: source | model "
         "correction | "
         "simulated link (GB/s) | x nominal | correction to midpoint |\n"
      << "|---|---|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& r : results) {
    const auto& link = topologies::link_preset(r.preset->device_link);
    out << fmt::format(
        "| {} | {} | {:g} | {:g} | {} | {:g} | {:.1f} | {:.3f} | {} |\n", r.preset->name, link.name,
        link.bandwidth.value / 1e9, link.effective_spec().bandwidth / 1e9,
        link.achievable ? link.achievable->source : std::string_view("none published: nominal"),
        r.preset->model_correction.value, r.preset->effective_device_link().bandwidth / 1e9,
        r.preset->calibration_factor(), correction_text(mean_correction(r)));
  }
  out << "\n## SimGrid settings\n\n| preset | settings | why |\n|---|---|---|\n";
  for (const auto& r : results)
    out << fmt::format("| {} | `{}` | {} |\n", r.preset->name, fmt::join(r.settings, " "),
                       r.preset->network_model->reason);
}

}  // namespace spmdsim::cli
