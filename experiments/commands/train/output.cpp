#include "commands/train/output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/platform_options.hpp"
#include "common/training_options.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::cli::train {
namespace {

// The strategy, with dp-overlap's bucket cap or the ZeRO-2/3 knobs in force.
std::string strategy_text(const models::TrainOptions& train) {
  const auto name = models::strategy_name(train.strategy);
  if (train.strategy == models::Strategy::dp_overlap)
    return fmt::format("{} (buckets of {:g} MiB)", name, train.bucket_bytes / kMiB);
  const std::string zero = zero_options_text(train.zero, train.strategy);
  return zero.empty() ? std::string(name) : fmt::format("{} ({})", name, zero);
}

Cell microseconds(Seconds seconds, int decimals) {
  return real_cell(seconds * 1e6, decimals);
}

// The all-reduce, all-gather and reduce-scatter algorithm the run used: --algorithm, or the platform's
// default (SimulationOptions::algorithms).
std::string collective_algorithm(const TrainCommandOptions& options) {
  if (!options.setup.algorithm.empty()) return options.setup.algorithm;
  return std::string(default_algorithm(CollectiveKind::all_reduce, collective_library(options.platform)));
}

}  // namespace

Rows training_rows(const std::vector<TrainingResult>& results) {
  Rows rows{.columns = {{.key = "devices", .header = "devices", .width = 8},
                        {.key = "global_batch", .header = "batch", .width = 8},
                        {.key = "samples_per_s", .header = "samples/s", .width = 12},
                        {.key = "tokens_per_s", .header = "tokens/s", .width = 12},
                        {.key = "mfu", .header = "mfu", .width = 6},
                        {.key = "step_time_us", .header = "step(us)", .width = 10},
                        {.key = "compute_us", .header = "compute(us)", .width = 11},
                        {.key = "communication_us", .header = "comm(us)", .width = 9},
                        {.key = "hidden_communication_us", .header = "hidden(us)", .width = 10},
                        {.key = "transfer_us", .header = "transfer(us)", .width = 12},
                        {.key = "idle_us", .header = "idle(us)", .width = 9},
                        {.key = "efficiency", .header = "efficiency", .width = 10},
                        {.key = "peak_memory_bytes", .header = "peak(MiB)", .width = 9},
                        {.key = "last_loss", .header = "loss", .width = 10}}};
  const auto& smallest = results.front();
  const double base = static_cast<double>(smallest.global_batch) / smallest.step_time / smallest.devices;
  for (const auto& r : results) {
    const double throughput = static_cast<double>(r.global_batch) / r.step_time;
    const double mfu = throughput * r.model_flops_per_sample / (r.devices * r.peak_flops);
    rows.cells.push_back(
        {whole_cell(r.devices), whole_cell(r.global_batch), real_cell(throughput, 1),
         r.tokens_per_sample > 0 ? real_cell(throughput * static_cast<double>(r.tokens_per_sample), 0)
                                 : empty_cell("n/a"),
         real_cell(mfu, 3), microseconds(r.step_time, 2), microseconds(r.compute, 2),
         microseconds(r.communication, 2), microseconds(r.hidden_communication, 2),
         microseconds(r.transfer, 2), microseconds(r.idle, 2), real_cell(throughput / r.devices / base, 3),
         real_cell(r.peak_memory, fmt::format("{:.3f}", r.peak_memory / kMiB)),
         r.last_loss ? real_cell(*r.last_loss, 6) : empty_cell("n/a")});
  }
  return rows;
}

void write_table(std::ostream& out, const TrainCommandOptions& options, const std::string& simgrid_source,
                 const TrainingResult& first, const Rows& rows) {
  const auto& setup = options.setup;
  std::vector<std::string> settings;
  for (const auto& [key, value] : first.simgrid) settings.push_back(key + ":" + value);
  out << fmt::format("# spmdsim train: data-parallel training of {}\n", setup.model.description())
      << fmt::format("# platform: {} ({})\n", first.platform, options.platform.summary)
      << fmt::format("# simgrid:  {} ({})\n", fmt::join(settings, ", "), simgrid_source)
      << fmt::format(
             "# training: {}, {} (learning rate {}), {}, micro-batches {}{}, fusion {}, collectives {}; {} "
             "scaling, {} {}; {} steps{}{}; {}\n",
             strategy_text(setup.train_options),
             options.optimizer_name + (options.fused_optimizer ? " fused" : ""),
             setup.optimizer.learning_rate(), precision_text(setup.train_options),
             setup.train_options.micro_batches,
             setup.train_options.donate_state ? ", state donated to the update" : "",
             setup.fusion ? "on" : "off", collective_algorithm(options), scaling_name(options.scaling),
             options.scaling == Scaling::strong ? "global batch" : "per-device batch",
             options.scaling == Scaling::strong ? options.batch : options.batch / options.devices.front(),
             setup.steps, setup.read_loss_every_step ? ", the loss read back after each" : "",
             setup.prefetch > 0
                 ? fmt::format(", batches prefetched {} ahead (transfer: only the devices' waits "
                               "for them)",
                               setup.prefetch)
                 : "",
             setup.model.is_transformer()
                 ? "abstract (shapes only: transformers are abstract-only); batches are "
                   "sequences, the model state is made on the devices"
             : setup.abstract ? "abstract (shapes only)"
                              : fmt::format("random data (seed {})", setup.seed))
      << "# legend:   per step, the run's simulated time / steps; compute, comm (exposed: the devices wait "
         "for it), hidden (communication overlapped by compute: dp-overlap's buckets, zero2/zero3's "
         "reduce-scatters under overlap_comm, zero3's prefetched gathers), transfer (host <-> "
         "device) and idle are the mean over the devices; efficiency = throughput per device against the "
         "smallest count's; mfu = model FLOPs per second per device (PaLM: 6N + 12 L h s per token; the "
         "MLP: 6N per sample) over the device's dense matmul peak for the training dtype; peak = the "
         "largest device's; loss = the last step's\n";
  cli::write_table(out, rows);
}

void write_json(std::ostream& out, const TrainCommandOptions& options,
                const std::vector<std::string>& simgrid_args, const TrainingResult& first, const Rows& rows,
                double wall_seconds) {
  const auto& setup = options.setup;
  nlohmann::ordered_json j;
  // hidden_communication_us, bucket_bytes, prefetch, fusion, tokens_per_s and mfu were added without
  // changing a field.
  j["schema_version"] = 1;
  j["command"] = "spmdsim train";
  add_platform_json(j, options.platform, first.platform, first.simgrid, simgrid_args);
  j["model"] = setup.model.to_json();
  j["strategy"] = models::strategy_name(setup.train_options.strategy);
  j["bucket_bytes"] = setup.train_options.strategy == models::Strategy::dp_overlap
                          ? nlohmann::ordered_json(setup.train_options.bucket_bytes)
                          : nlohmann::ordered_json(nullptr);
  j["micro_batches"] = setup.train_options.micro_batches;
  j["precision"] = precision_name(setup.train_options.precision);
  j["reduce_dtype"] = dtype_name(setup.train_options.reduction_dtype());
  j["param_shard_dtype"] = dtype_name(setup.train_options.param_dtype());
  j["optimizer"] = options.optimizer_name;
  j["fused_optimizer"] = options.fused_optimizer;
  j["donate_state"] = setup.train_options.donate_state;
  j["learning_rate"] = setup.optimizer.learning_rate();
  j["scaling"] = scaling_name(options.scaling);
  j["batch"] = options.batch;
  j["steps"] = setup.steps;
  j["abstract"] = setup.abstract;
  j["seed"] = setup.seed;
  j["read_loss_every_step"] = setup.read_loss_every_step;
  j["prefetch"] = setup.prefetch;
  j["fusion"] = setup.fusion;
  j["collective_algorithm"] = collective_algorithm(options);
  j["mfu"] =
      "model FLOPs per second per device (PaLM: 6N + 12 L h s per token; the MLP: 6N per sample) over the "
      "device's dense matmul peak for the training dtype";
  j["times"] =
      "per step; compute, communication (exposed), hidden_communication (overlapped by compute), transfer "
      "(exposed: what the devices waited for) and idle are the mean over the devices";
  j["wall_time_s"] = wall_seconds;
  j["rows"] = rows_json(rows);
  out << j.dump(2) << "\n";
}

}  // namespace spmdsim::cli::train
