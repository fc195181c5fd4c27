#include "commands/train/training_run.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "common/output_files.hpp"
#include "common/simulation_start.hpp"
#include "common/training_options.hpp"
#include "spmdsim/models/batch_prefetcher.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/report_writers.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli {
namespace {

// Step `step`'s global batch: inputs uniform in [-1, 1), int32 labels uniform over the classes. It depends
// on the seed, the step and the batch size only, so every device count of a strong-scaling run trains on
// the same data.
std::pair<Array, Array> random_batch(const TrainingSetup& setup, int step, std::int64_t batch) {
  const std::int64_t features = setup.model.layer_sizes.front();
  const std::int64_t classes = setup.model.layer_sizes.back();
  std::seed_seq seed{setup.seed, static_cast<unsigned>(step)};
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<std::int64_t> label(0, classes - 1);
  std::vector<double> x(static_cast<std::size_t>(batch * features));
  for (auto& v : x) v = uniform(generator);
  std::vector<double> y(static_cast<std::size_t>(batch));
  for (auto& v : y) v = static_cast<double>(label(generator));
  return {Array::from_values({batch, features}, x, DType::f32), Array::from_values({batch}, y, DType::i32)};
}

// The loss runs in float32 whatever the precision (docs/training.md), so a device without a float32 peak (the
// TPU presets publish bfloat16 only) would stop the first step: refuse it before.
void check_float32_peak(const Simulation& sim, int devices) {
  for (int d = 0; d < devices; ++d) {
    const DeviceSpec& spec = sim.platform().devices[static_cast<std::size_t>(d)].spec;
    try {
      spec.peak_flops_for(DType::f32);
    } catch (const std::invalid_argument&) {
      throw UsageError(
          fmt::format("the {} devices have no peak FLOP/s for float32, which training needs for its "
                      "loss even under --precision mixed_bf16; use a device preset that has one (a GPU)",
                      spec.model));
    }
  }
}

// Leaves `value` to the process's exit: never destroyed.
template <class T>
void leave_to_exit(T&& value) {
  static_cast<void>(new std::decay_t<T>(std::forward<T>(value)));
}

}  // namespace

HostDemand training_host_demand(const TrainingSetup& setup, int devices, std::int64_t global_batch,
                                int channels) {
  HostDemand demand{.actors = training_actors(devices, channels),
                    .abstract = setup.abstract || setup.model.is_transformer()};
  if (demand.abstract) return demand;
  const auto& sizes = setup.model.layer_sizes;
  const double batch = static_cast<double>(global_batch);
  const double features = static_cast<double>(sizes.front());
  double hidden = 0;
  for (std::size_t i = 1; i < sizes.size(); ++i) hidden += static_cast<double>(sizes[i]);
  const double batches = batch * (features * 4 + 4) * (1 + setup.prefetch);  // float32 inputs, int32 labels
  const double making = batch * (features + 1) * 8;                          // random_batch's float64 values
  const double activations = batch * hidden * 4 * 3;  // each layer's output, pre-activation and gradient
  const double parameters = static_cast<double>(setup.model.num_parameters());
  // Each device's parameters, gradients and reduction scratch in float32, and its optimizer state.
  const double state =
      parameters * (3 * 4 + static_cast<double>(setup.optimizer.state_bytes_per_parameter(4)));
  demand.data_bytes += std::max(batches + making, batches + activations) + devices * state + parameters * 4;
  return demand;
}

void check_attention_kernel(const Simulation& sim, int devices, const ModelChoice& model) {
  if (!model.is_transformer()) return;
  const models::Attention attention = model.transformer->attention;
  const AttentionKernel kernel = models::attention_kernel(attention);
  // FlashAttention-2 (and naive, which has no kernel) runs everywhere: a device without its figure takes the
  // H100's fractions of peak.
  if (kernel == AttentionKernel::flash2) return;
  for (int d = 0; d < devices; ++d) {
    const DeviceSpec& spec = sim.platform().devices[static_cast<std::size_t>(d)].spec;
    if (!spec.rates_attention_kernel(kernel)) {
      std::vector<std::string_view> rated;
      for (const topologies::DevicePreset& preset : topologies::device_presets())
        if (preset.spec().rates_attention_kernel(kernel)) rated.push_back(preset.name);
      throw UsageError(fmt::format(
          "--attention {}: the {} devices have no published rate of the {} kernel; presets with one: {} "
          "(and the nodes of them); use --attention fused",
          models::attention_name(attention), spec.model, attention_kernel_name(kernel),
          fmt::join(rated, ", ")));
    }
  }
}

std::unique_ptr<Simulation> start_training_simulation(const ChosenPlatform& platform,
                                                      std::vector<std::string> simgrid_argv, int devices,
                                                      SimulationOptions options,
                                                      const std::string& algorithm) {
  if (!algorithm.empty())
    for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter})
      options.algorithms[kind] = algorithm;
  auto sim = start_simulation(platform, std::move(simgrid_argv), devices, options);
  check_float32_peak(*sim, devices);
  return sim;
}

TrainingResult run_training(const TrainingSetup& setup, const ChosenPlatform& platform,
                            std::vector<std::string> simgrid_argv, int devices, std::int64_t global_batch,
                            const std::string& trace_path) {
  const auto simulation =
      start_training_simulation(platform, std::move(simgrid_argv), devices,
                                {.aggregate_ring_phases = setup.aggregate,
                                 .fusion = setup.fusion,
                                 .timelines = !trace_path.empty()},  // only a trace reads the spans
                                setup.algorithm);
  Simulation& sim = *simulation;
  check_attention_kernel(sim, devices, setup.model);

  const models::TrainStep step(setup.model.trainable(), setup.optimizer, devices, setup.train_options);
  // A transformer's state is made on the devices, as a training loop finds it (sending a Psi-sized state from
  // the host is what no real run does); the MLP's comes from the host, as the tutorials' loop sends it.
  models::TrainState state = setup.model.is_transformer() ? step.init_on_devices(sim)
                             : setup.abstract
                                 ? step.init(step.model().init_abstract())
                                 : step.init(models::Mlp(setup.model.layer_sizes).init(setup.seed));
  const std::int64_t per_device = global_batch / devices;
  models::BatchPrefetcher batches(
      sim, step,
      [&](int s) {
        if (setup.abstract) return setup.model.abstract_batch(devices, per_device);
        const auto [global_x, global_y] = random_batch(setup, s, global_batch);
        return std::pair{models::shard_batch(global_x, devices), models::shard_batch(global_y, devices)};
      },
      setup.steps, setup.prefetch);
  Array loss;
  std::optional<double> read_loss;
  for (int s = 0; s < setup.steps; ++s) {
    const auto [x, y] = batches.next();
    auto result = step(sim, state, x, y);
    state = std::move(result.state);
    loss = std::move(result.loss);
    if (setup.read_loss_every_step) {
      const Array host_loss = sim.device_get(Tree(loss)).leaf();
      if (!setup.abstract) read_loss = host_loss.item(0);
    }
  }

  // The training's report, before the last loss is read back (unless every step read it).
  const SimulationReport report = sim.report();
  if (!trace_path.empty())
    write_file_through(trace_path, [&](std::ostream& out) { write_chrome_trace(out, report); });
  TrainingResult result{.devices = devices, .global_batch = global_batch};
  result.step_time = sim.now() / setup.steps;
  const double per_step = 1.0 / (setup.steps * devices);
  for (int d = 0; d < devices; ++d) {
    const DeviceTimes& times = report.device_totals[static_cast<std::size_t>(d)];
    result.compute += times.compute * per_step;
    result.communication += times.communication_total() * per_step;
    result.hidden_communication += times.hidden_communication() * per_step;
    result.transfer += times.transfer * per_step;
    result.idle += times.idle * per_step;
    result.peak_memory = std::max(result.peak_memory, report.memory[static_cast<std::size_t>(d)].peak);
  }
  result.idle = std::max(result.idle, 0.0);  // the report subtracts busy from elapsed time: -1e-20 is 0
  if (!setup.abstract) result.last_loss = read_loss ? read_loss : sim.device_get(Tree(loss)).leaf().item(0);
  const DType dtype =
      setup.train_options.precision == models::Precision::mixed_bf16 ? DType::bf16 : DType::f32;
  result.peak_flops = sim.platform().devices.front().spec.matmul_rate(dtype).peak;
  if (setup.model.is_transformer()) {
    const models::Transformer transformer(*setup.model.transformer);
    result.tokens_per_sample = setup.model.transformer->seq_len;
    result.model_flops_per_sample =
        transformer.model_flops_per_token() * static_cast<double>(result.tokens_per_sample);
  } else {
    result.model_flops_per_sample = 6 * static_cast<double>(setup.model.num_parameters());
  }
  result.platform = sim.platform().description;
  result.simgrid = simgrid_settings();
  // Freeing the state one buffer handle at a time would be a tenth of a run at thousands of devices, for a
  // process about to exit.
  leave_to_exit(std::move(state));
  return result;
}

}  // namespace spmdsim::cli
