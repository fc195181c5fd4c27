#include "commands/memory/memory_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commands/train/training_run.hpp"
#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::cli {

MemoryMeasurement measure_memory(const MemorySetup& setup, const ChosenPlatform& platform,
                                 std::vector<std::string> simgrid_argv) {
  const auto simulation =
      start_training_simulation(platform, std::move(simgrid_argv), setup.devices,
                                {.aggregate_ring_phases = true, .timelines = setup.keep_timeline});
  Simulation& sim = *simulation;
  check_attention_kernel(sim, setup.devices, setup.model);
  MemoryMeasurement m;
  m.platform = sim.platform().description;
  m.simgrid = simgrid_settings();
  m.capacity = sim.platform().devices.front().spec.memory_capacity;
  const models::TrainStep step(setup.model.trainable(), setup.optimizer, setup.devices, setup.train_options);
  try {
    const models::TrainState state = step.init_on_devices(sim);
    const auto [tokens_or_x, labels] = setup.model.abstract_batch(setup.devices, setup.per_device_batch);
    step(sim, state, tokens_or_x, labels);
  } catch (const OutOfMemoryError& e) {
    m.out_of_memory = e.what();
    return m;
  }

  const SimulationReport report = sim.report();
  const auto largest = std::max_element(report.memory.begin(), report.memory.begin() + setup.devices,
                                        [](const auto& a, const auto& b) { return a.peak < b.peak; });
  m.device = static_cast<int>(largest - report.memory.begin());
  m.device_name = largest->device;
  m.capacity = largest->capacity;
  m.peak = largest->peak;
  m.at_peak = largest->at_peak;
  m.model_states = models::model_states(step.memory_before_update().at(static_cast<std::size_t>(m.device)));
  m.pass_peak = step.peak_before_update().at(static_cast<std::size_t>(m.device)).total();
  for (const auto& call : report.calls)
    if (call.name == step.options().name)
      std::tie(m.step_start, m.step_end) = std::pair{call.start, call.end};
  if (setup.keep_timeline) m.timeline = report.memory_timelines.front();
  return m;
}

double zero_formula_bytes(const MemorySetup& setup) {
  const models::TrainOptions& train = setup.train_options;
  const bool separate_master = !train.params_are_master();
  const double p = separate_master ? 2 : 4;
  const double g = separate_master ? static_cast<double>(itemsize(train.reduction_dtype())) : 4;
  const double k =
      static_cast<double>(setup.optimizer.state_bytes_per_parameter(4)) + (separate_master ? 4 : 0);
  return models::zero_model_state_bytes(setup.train_options.strategy, setup.model.num_parameters(),
                                        setup.devices, p, g, k);
}

}  // namespace spmdsim::cli
