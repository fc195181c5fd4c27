// Calibration of the node presets: the all-reduce busbw a preset's 8-device node gives in simulation, next to
// the published nccl-tests figure it is calibrated against (NodePreset::calibration). `spmdsim calibrate`
// prints the comparison and writes docs/calibration.md; tests/calibration_test.cpp holds every preset within
// kCalibrationTolerance of the published midpoint.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "spmdsim/topologies/presets.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::cli {

// The largest relative error a calibrated preset may show against the published midpoint.
inline constexpr double kCalibrationTolerance = 0.05;

// One all-reduce of S bytes (float32) on the node's devices.
struct CalibrationPoint {
  double bytes = 0;
  Seconds time = 0;  // the collective on its slowest device
  double busbw = 0;  // B/s: S / time x 2(n-1)/n, as nccl-tests
};

// Runs the preset's calibration all-reduce (its target's algorithm) once per target size on one node built
// from the preset, with the device link's bandwidth multiplied by `link_scale`, on abstract arrays (shapes
// only: 16 GiB x 8 devices of real data would not fit). Runs under the preset's network model; settings in
// `simgrid_args` (--cfg=..., --log=...) take precedence. It creates the process's one SimGrid engine, so a
// process calls it once. Throws std::invalid_argument for a preset without a calibration target.
std::vector<CalibrationPoint> simulate_calibration(const topologies::NodePreset& preset,
                                                   double link_scale = 1.0,
                                                   const std::vector<std::string>& simgrid_args = {});

// The settings a calibration run uses: the preset's, minus those `simgrid_args` set, plus `simgrid_args`.
std::vector<std::string> calibration_settings(const topologies::NodePreset& preset,
                                              const std::vector<std::string>& simgrid_args);

// One preset's comparison. Time is affine in 1 / link bandwidth (t = a + c / B) under the alpha-beta model,
// so two runs (link_scale 1 and 2) give the model correction that would put the busbw at the midpoint.
struct CalibrationResult {
  const topologies::NodePreset* preset = nullptr;
  std::vector<std::string> settings;      // SimGrid settings the runs used
  std::vector<CalibrationPoint> points;   // at link_scale 1
  std::vector<CalibrationPoint> doubled;  // at link_scale 2, same sizes
  // The model correction that would make the busbw equal the published midpoint, per size (0: unreachable by
  // the link alone: the time not spent on the link already exceeds the target).
  std::vector<double> suggested_corrections;
};

CalibrationResult make_result(const topologies::NodePreset& preset, std::vector<std::string> settings,
                              std::vector<CalibrationPoint> points, std::vector<CalibrationPoint> doubled);
// (simulated - midpoint) / midpoint.
double relative_error(const topologies::NodePreset& preset, const CalibrationPoint& point);

// Reporters: the console table and the markdown page (docs/calibration.md).
void write_calibration_table(std::ostream& out, const std::vector<CalibrationResult>& results);
void write_calibration_markdown(std::ostream& out, const std::vector<CalibrationResult>& results);

}  // namespace spmdsim::cli
