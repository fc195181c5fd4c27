// One (model, strategy) of `spmdsim memory`: one abstract training step in one Simulation, with the device
// memory it took. It runs in a child process of its own (forked_run.hpp): one SimGrid engine per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_io.hpp"
#include "common/model_options.hpp"
#include "common/platform_options.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::cli {

struct MemorySetup {
  ModelChoice model;
  models::Optimizer optimizer = models::Optimizer::adam(1e-4);
  models::TrainOptions train_options;
  int devices = 1;
  std::int64_t per_device_batch = 1;  // samples, or a transformer's sequences
  bool keep_timeline = false;         // device 0's ledger events, for the plot over time
};

// What one step took. When it ran out of memory, only `out_of_memory`, `capacity` and the platform are set.
struct MemoryMeasurement {
  std::optional<std::string> out_of_memory;  // the OutOfMemoryError's message
  int device = 0;                            // the device of the largest peak (the first, among equals)
  std::string device_name;
  Bytes capacity = 0;      // the devices' memory
  Bytes peak = 0;          // that device's whole-run peak: the state's creation and the step
  BytesByTag at_peak{};    // what its buffers held at the peak, by tag
  Bytes model_states = 0;  // parameters + optimizer state + gradients just before the update, on that device
  Bytes pass_peak = 0;     // that device's peak in the step before the update: forward, backward, reduction
  Seconds step_start = 0, step_end = 0;  // the step's call, simulated time
  MemoryTimeline timeline;               // device 0, every allocation and release (keep_timeline)
  std::string platform;                  // the platform's description
  std::vector<std::pair<std::string, std::string>> simgrid;  // settings in force
};

// How the child that ran it hands it to the parent.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryMeasurement, out_of_memory, device, device_name, capacity, peak,
                                   at_peak, model_states, pass_peak, step_start, step_end, timeline, platform,
                                   simgrid)

// Makes the model state on the first `setup.devices` devices of `platform` (TrainStep::init_on_devices, as a
// training loop finds it) and runs one abstract step on them, with aggregated ring phases (they place and
// release memory as the per-message run does: docs/performance.md). Running out of memory is a result, not an
// error. Throws UsageError for a platform of too few devices.
MemoryMeasurement measure_memory(const MemorySetup& setup, const ChosenPlatform& platform,
                                 std::vector<std::string> simgrid_argv);

// The ZeRO paper's model states per device for the setup's strategy (models::zero_model_state_bytes, the
// strategy's own formula), with P bytes of parameters, G of gradients and K of optimizer state per parameter:
// mixed-precision Adam is the paper's case (P = G = 2, K = 12: fp32 master weights, momentum and variance);
// fp32 has P = G = 4 and K = the optimizer's fp32 state (Adam 8, momentum 4, SGD 0), mixed adds 4 (the
// master) and keeps G in the reduce dtype; with fp32 param shards (FSDP's layout) mixed counts as fp32.
double zero_formula_bytes(const MemorySetup& setup);

}  // namespace spmdsim::cli
