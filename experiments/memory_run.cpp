#include "memory_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "command_line.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/simulation.hpp"
#include "training_run.hpp"

namespace spmdsim::cli {

void to_json(nlohmann::json& j, const MemoryMeasurement& m) {
  nlohmann::json timeline = nlohmann::json::array();
  for (const auto& event : m.timeline)
    timeline.push_back({event.time, static_cast<int>(event.tag.index()), event.delta});
  j = {{"out_of_memory", m.out_of_memory ? nlohmann::json(*m.out_of_memory) : nlohmann::json(nullptr)},
       {"device", m.device},
       {"device_name", m.device_name},
       {"capacity", m.capacity},
       {"peak", m.peak},
       {"at_peak", m.at_peak},
       {"model_states", m.model_states},
       {"step_start", m.step_start},
       {"step_end", m.step_end},
       {"timeline", timeline},
       {"platform", m.platform},
       {"simgrid", m.simgrid}};
}

void from_json(const nlohmann::json& j, MemoryMeasurement& m) {
  if (!j.at("out_of_memory").is_null()) m.out_of_memory = j.at("out_of_memory").get<std::string>();
  j.at("device").get_to(m.device);
  j.at("device_name").get_to(m.device_name);
  j.at("capacity").get_to(m.capacity);
  j.at("peak").get_to(m.peak);
  j.at("at_peak").get_to(m.at_peak);
  j.at("model_states").get_to(m.model_states);
  j.at("step_start").get_to(m.step_start);
  j.at("step_end").get_to(m.step_end);
  for (const auto& event : j.at("timeline"))
    m.timeline.push_back({.time = event[0].get<Seconds>(),
                          .in_use = 0,  // the plot sums the deltas by tag; the total is not carried
                          .tag = MemoryTag(event[1].get<std::uint8_t>()),
                          .delta = event[2].get<Bytes>()});
  j.at("platform").get_to(m.platform);
  j.at("simgrid").get_to(m.simgrid);
}

MemoryMeasurement measure_memory(const MemorySetup& setup, const ChosenPlatform& platform,
                                 std::vector<std::string> simgrid_argv) {
  const auto simulation = start_training_simulation(platform, std::move(simgrid_argv), setup.devices, true);
  Simulation& sim = *simulation;
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
  for (const auto& call : report.calls)
    if (call.name == step.options().name) std::tie(m.step_start, m.step_end) = std::pair{call.start, call.end};
  if (setup.keep_timeline) m.timeline = report.memory_timelines.front();
  return m;
}

double zero_formula_bytes(const MemorySetup& setup) {
  const bool mixed = setup.train_options.precision == models::Precision::mixed_bf16;
  const double p = mixed ? 2 : 4;
  const double g = p;
  const double k = static_cast<double>(setup.optimizer.state_bytes_per_parameter(4)) + (mixed ? 4 : 0);
  const double psi = static_cast<double>(setup.model.num_parameters());
  const double n = setup.devices;
  switch (setup.train_options.strategy) {
    case models::Strategy::dp:
    case models::Strategy::dp_overlap: return (p + g + k) * psi;
    case models::Strategy::zero1: return (p + g) * psi + k * psi / n;
    case models::Strategy::zero2: return p * psi + (g + k) * psi / n;
    case models::Strategy::zero3: return (p + g + k) * psi / n;
  }
  return 0;
}

}  // namespace spmdsim::cli
