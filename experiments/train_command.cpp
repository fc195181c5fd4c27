#include "train_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "command_line.hpp"
#include "config_file.hpp"
#include "forked_run.hpp"
#include "model_options.hpp"
#include "platform_options.hpp"
#include "plotting.hpp"
#include "spmdsim/errors.hpp"
#include "training_options.hpp"
#include "training_run.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;

enum class Scaling { strong, weak };

struct TrainCommandOptions {
  TrainingSetup setup;
  std::string optimizer_name;
  bool fused_optimizer = false;
  Scaling scaling = Scaling::strong;
  std::int64_t batch = 0;  // strong: the global batch; weak: the global batch at the smallest device count
  std::vector<int> devices;
  ChosenPlatform platform;  // for the largest device count
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
  std::string trace_path;
};

// The global batch at `devices`: fixed under strong scaling; under weak scaling it grows with the devices,
// so that each device keeps the per-device batch of the smallest count.
std::int64_t global_batch(const TrainCommandOptions& options, int devices) {
  if (options.scaling == Scaling::strong) return options.batch;
  return options.batch / options.devices.front() * devices;
}

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<TrainCommandOptions> parse(const std::vector<std::string>& args) {
  std::string devices, scaling, batch, strategy, micro_batches, precision, steps, bucket_mb, prefetch;
  double learning_rate = 0;
  PlatformRequest platform;
  ModelRequest model;
  TrainCommandOptions options;
  po::options_description described("spmdsim train options");
  described.add_options()("help,h", "show this help")(
      "devices", po::value(&devices)->default_value("1,2,4,8"),
      "device counts p to train on (1 to 1024), each in its own simulation on the first p devices of the "
      "platform")("scaling", po::value(&scaling)->default_value("strong"),
                  "strong: the same global batch at every count; weak: the per-device batch of the smallest "
                  "count at every "
                  "count")(
      "batch", po::value(&batch)->default_value("256"),
      "global batch (weak scaling: at the smallest device count), in samples or a transformer's sequences; "
      "each device gets an equal share")(
      "steps", po::value(&steps)->default_value("10"), "training steps per device count")(
      "strategy", po::value(&strategy)->default_value("dp"),
      "dp, dp-overlap, zero1, zero2 or zero3 (docs/training.md)")(
      "bucket-mb", po::value(&bucket_mb),
      "dp-overlap: gradient bucket cap in MiB (default 25, as PyTorch DDP's bucket_cap_mb)")(
      "micro-batches", po::value(&micro_batches)->default_value("1"),
      "gradient accumulation: micro-batches per device and step")(
      "precision", po::value(&precision)->default_value("fp32"),
      "fp32, or mixed_bf16 (bf16 compute and gradients, fp32 master weights)")(
      "optimizer", po::value(&options.optimizer_name)->default_value("sgd"), "sgd, momentum (0.9) or adam")(
      "fused-optimizer", po::bool_switch(&options.fused_optimizer), kFusedOptimizerHelp)(
      "learning-rate", po::value(&learning_rate)->default_value(0.01), "the optimizer's learning rate")(
      "abstract", po::bool_switch(&options.setup.abstract),
      "train on shapes only: every cost and size, no values (and no loss)")(
      "read-loss", po::bool_switch(&options.setup.read_loss_every_step),
      "read the loss back to the host after every step, as the tutorials' loop prints it: a device->host "
      "transfer per step (the transfer column); otherwise only the last step's loss is read, after the run")(
      "seed", po::value(&options.setup.seed)->default_value(0),
      "seed of the initial params and the random batches")(
      "prefetch", po::value(&prefetch)->default_value("0"),
      "batches in flight ahead of the step, as flax.jax_utils.prefetch_to_device's size: the host puts "
      "batch k+N on the devices (an asynchronous device_put) before step k, so its transfer overlaps the "
      "steps before it and the transfer column shows only what the devices still wait for; 0: each batch "
      "goes with its step");
  const std::string model_help = fmt::format(
      "the model: {} (docs/training.md); transformers train abstract only (shapes, no values)", model_names_text());
  described.add_options()("model", po::value(&model.model)->default_value("mlp"), model_help.c_str());
  add_model_shape_options(described, model);
  add_platform_options(described, platform);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path), "also write the run as JSON to this file")(
      "trace", po::value(&options.trace_path),
      "also write the Chrome trace (chrome://tracing, ui.perfetto.dev) of the run at the largest device count "
      "to this file: every device's compute, communication and transfer spans, its memory as a counter")(
      "plot", po::value(&options.plot_prefix),
      "also plot throughput, efficiency and the step time's breakdown against the devices to PREFIX.png and "
      "PREFIX.svg (python3 with matplotlib)");
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim train [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
        << "Strong or weak scaling of data-parallel training of a model (the MLP [784, 256, 128, 10] or a\n"
        << "transformer) over device counts, each count in its own simulation on one simulated platform.\n\n"
        << described << "\n";
    return std::nullopt;
  }

  auto& setup = options.setup;
  setup.model = values.attributed({"model", "layers", "hidden", "heads", "seq-len", "vocab", "recompute"},
                                  [&] { return choose_models({model.model}, model).front(); });
  if (setup.model.is_transformer()) setup.abstract = true;  // the header says so
  values.attributed({"devices"}, [&] {
    for (const auto& item : split_list(devices)) {
      int p = 0;
      if (item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos ||
          (p = std::stoi(item)) < 1 || p > kMaxDevices)
        throw UsageError(
            fmt::format("--devices: '{}' is not a device count from 1 to {}", item, kMaxDevices));
      if (std::find(options.devices.begin(), options.devices.end(), p) == options.devices.end())
        options.devices.push_back(p);
    }
    if (options.devices.empty()) throw UsageError("--devices names no device count");
    std::sort(options.devices.begin(), options.devices.end());
  });
  values.attributed({"scaling"}, [&] {
    if (scaling == "strong")
      options.scaling = Scaling::strong;
    else if (scaling == "weak")
      options.scaling = Scaling::weak;
    else
      throw UsageError(fmt::format("unknown --scaling '{}'; valid: strong, weak", scaling));
  });
  options.batch = values.attributed({"batch"}, [&] { return parse_count(batch, "--batch", 1); });
  setup.steps =
      static_cast<int>(values.attributed({"steps"}, [&] { return parse_count(steps, "--steps", 1); }));
  setup.prefetch = static_cast<int>(
      values.attributed({"prefetch"}, [&] { return parse_count(prefetch, "--prefetch", 0); }));
  setup.train_options.micro_batches = static_cast<int>(
      values.attributed({"micro-batches"}, [&] { return parse_count(micro_batches, "--micro-batches", 1); }));
  setup.train_options.strategy =
      values.attributed({"strategy"}, [&] { return parse_strategy_option(strategy); });
  values.attributed({"bucket-mb", "strategy"}, [&] {
    if (bucket_mb.empty()) return;
    if (setup.train_options.strategy != models::Strategy::dp_overlap)
      throw UsageError("--bucket-mb applies to --strategy dp-overlap only");
    std::size_t used = 0;
    double mib = 0;
    try {
      mib = std::stod(bucket_mb, &used);
    } catch (const std::exception&) {
    }
    if (used != bucket_mb.size() || !(mib > 0) || !std::isfinite(mib))
      throw UsageError(fmt::format("--bucket-mb must be a positive number of MiB (got '{}')", bucket_mb));
    setup.train_options.bucket_bytes = mib * kMiB;
  });
  setup.train_options.precision =
      values.attributed({"precision"}, [&] { return parse_precision(precision); });
  setup.optimizer = values.attributed({"optimizer", "learning-rate"}, [&] {
    if (!(learning_rate > 0))
      throw UsageError(fmt::format("--learning-rate must be positive (got {})", learning_rate));
    return make_optimizer(options.optimizer_name, learning_rate, options.fused_optimizer);
  });
  values.attributed({"batch", "devices", "scaling", "micro-batches"}, [&] {
    const int shared_by = options.scaling == Scaling::strong ? 0 : options.devices.front();
    for (int p : options.devices) {
      if (options.batch % (shared_by ? shared_by : p) != 0)
        throw UsageError(
            fmt::format("--batch {} is not divisible by {} devices: each device gets an equal share of "
                        "the global batch",
                        options.batch, shared_by ? shared_by : p));
      const auto per_device = global_batch(options, p) / p;
      if (per_device % setup.train_options.micro_batches != 0)
        throw UsageError(
            fmt::format("the per-device batch {} at {} devices is not divisible by --micro-batches {}",
                        per_device, p, setup.train_options.micro_batches));
    }
  });
  options.platform = values.attributed({"topology", "preset", "nodes", "platform", "devices"},
                                       [&] { return choose_platform(platform, options.devices.back()); });
  return options;
}

// ---------------------------------------------------------------------------------------------------------
// The rows: each count's result with the figures derived from it.

struct Row {
  TrainingResult result;
  double throughput = 0;  // samples per second of simulated time
  double efficiency = 0;  // throughput per device against the smallest count's
};

std::vector<Row> make_rows(const std::vector<TrainingResult>& results) {
  std::vector<Row> rows;
  for (const auto& r : results)
    rows.push_back({.result = r, .throughput = static_cast<double>(r.global_batch) / r.step_time});
  const double base = rows.front().throughput / rows.front().result.devices;
  for (auto& row : rows) row.efficiency = row.throughput / row.result.devices / base;
  return rows;
}

std::string_view scaling_name(Scaling scaling) {
  return scaling == Scaling::strong ? "strong" : "weak";
}

// The strategy, with dp-overlap's bucket cap.
std::string strategy_text(const models::TrainOptions& train) {
  const auto name = models::strategy_name(train.strategy);
  if (train.strategy != models::Strategy::dp_overlap) return std::string(name);
  return fmt::format("{} (buckets of {:g} MiB)", name, train.bucket_bytes / kMiB);
}

std::string loss_text(const TrainingResult& r) {
  return r.last_loss ? fmt::format("{:.6f}", *r.last_loss) : "n/a";
}

void write_table(std::ostream& out, const TrainCommandOptions& options, const std::string& simgrid_source,
                 const std::vector<Row>& rows) {
  const auto& setup = options.setup;
  const auto& first = rows.front().result;
  std::vector<std::string> settings;
  for (const auto& [key, value] : first.simgrid) settings.push_back(key + ":" + value);
  out << fmt::format("# spmdsim train: data-parallel training of {}\n", setup.model.description())
      << fmt::format("# platform: {} ({})\n", first.platform, options.platform.summary)
      << fmt::format("# simgrid:  {} ({})\n", fmt::join(settings, ", "), simgrid_source)
      << fmt::format(
             "# training: {}, {} (learning rate {}), {}, micro-batches {}; {} scaling, {} {}; {} steps{}{}; {}\n",
             strategy_text(setup.train_options),
             options.optimizer_name + (options.fused_optimizer ? " fused" : ""), setup.optimizer.learning_rate(),
             precision_name(setup.train_options.precision), setup.train_options.micro_batches,
             scaling_name(options.scaling),
             options.scaling == Scaling::strong ? "global batch" : "per-device batch",
             options.scaling == Scaling::strong ? options.batch : options.batch / options.devices.front(),
             setup.steps, setup.read_loss_every_step ? ", the loss read back after each" : "",
             setup.prefetch > 0 ? fmt::format(", batches prefetched {} ahead (transfer: only the devices' waits "
                                              "for them)",
                                              setup.prefetch)
                                : "",
             setup.model.is_transformer() ? "abstract (shapes only: transformers are abstract-only); batches are "
                                            "sequences, the model state is made on the devices"
             : setup.abstract             ? "abstract (shapes only)"
                                          : fmt::format("random data (seed {})", setup.seed))
      << "# legend:   per step, the run's simulated time / steps; compute, comm (exposed: the devices wait "
         "for it), hidden (communication overlapped by compute: dp-overlap's buckets), transfer (host <-> "
         "device) and idle are the mean over the devices; efficiency = throughput per device against the "
         "smallest count's; peak = the largest device's; loss = the last step's\n"
      << fmt::format(
             "#{:>7}  {:>8}  {:>12}  {:>10}  {:>11}  {:>9}  {:>10}  {:>12}  {:>9}  {:>10}  {:>9}  {:>10}\n",
             "devices", "batch", "samples/s", "step(us)", "compute(us)", "comm(us)", "hidden(us)",
             "transfer(us)", "idle(us)", "efficiency", "peak(MiB)", "loss");
  for (const auto& row : rows) {
    const auto& r = row.result;
    out << fmt::format(
        "{:>8}  {:>8}  {:>12.1f}  {:>10.2f}  {:>11.2f}  {:>9.2f}  {:>10.2f}  {:>12.2f}  {:>9.2f}  {:>10.3f}  "
        "{:>9.3f}  {:>10}\n",
        r.devices, r.global_batch, row.throughput, r.step_time * 1e6, r.compute * 1e6, r.communication * 1e6,
        r.hidden_communication * 1e6, r.transfer * 1e6, r.idle * 1e6, row.efficiency, r.peak_memory / kMiB,
        loss_text(r));
  }
}

constexpr const char* kCsvColumns[] = {
    "devices",    "global_batch",     "samples_per_s",           "step_time_us",
    "compute_us", "communication_us", "hidden_communication_us", "transfer_us",
    "idle_us",    "efficiency",       "peak_memory_bytes",       "last_loss"};

void write_csv(std::ostream& out, const std::vector<Row>& rows) {
  out << fmt::format("{}\n", fmt::join(kCsvColumns, ","));
  for (const auto& row : rows) {
    const auto& r = row.result;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.devices, r.global_batch, row.throughput,
                       r.step_time * 1e6, r.compute * 1e6, r.communication * 1e6,
                       r.hidden_communication * 1e6, r.transfer * 1e6, r.idle * 1e6, row.efficiency,
                       r.peak_memory, r.last_loss ? fmt::format("{}", *r.last_loss) : "");
  }
}

void write_json(std::ostream& out, const TrainCommandOptions& options,
                const std::vector<std::string>& simgrid_args, const std::vector<Row>& rows, double wall_seconds) {
  const auto& setup = options.setup;
  nlohmann::ordered_json j;
  // hidden_communication_us, bucket_bytes and prefetch were added without changing a field.
  j["schema_version"] = 1;
  j["command"] = "spmdsim train";
  add_platform_json(j, options.platform, rows.front().result.platform, rows.front().result.simgrid, simgrid_args);
  j["model"] = setup.model.to_json();
  j["strategy"] = models::strategy_name(setup.train_options.strategy);
  j["bucket_bytes"] = setup.train_options.strategy == models::Strategy::dp_overlap
                          ? nlohmann::ordered_json(setup.train_options.bucket_bytes)
                          : nlohmann::ordered_json(nullptr);
  j["micro_batches"] = setup.train_options.micro_batches;
  j["precision"] = precision_name(setup.train_options.precision);
  j["optimizer"] = options.optimizer_name;
  j["fused_optimizer"] = options.fused_optimizer;
  j["learning_rate"] = setup.optimizer.learning_rate();
  j["scaling"] = scaling_name(options.scaling);
  j["batch"] = options.batch;
  j["steps"] = setup.steps;
  j["abstract"] = setup.abstract;
  j["seed"] = setup.seed;
  j["read_loss_every_step"] = setup.read_loss_every_step;
  j["prefetch"] = setup.prefetch;
  j["times"] =
      "per step; compute, communication (exposed), hidden_communication (overlapped by compute), transfer "
      "(exposed: what the devices waited for) and idle are the mean over the devices";
  j["wall_time_s"] = wall_seconds;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const auto& r = row.result;
    j["rows"].push_back({{"devices", r.devices},
                         {"global_batch", r.global_batch},
                         {"samples_per_s", row.throughput},
                         {"step_time_us", r.step_time * 1e6},
                         {"compute_us", r.compute * 1e6},
                         {"communication_us", r.communication * 1e6},
                         {"hidden_communication_us", r.hidden_communication * 1e6},
                         {"transfer_us", r.transfer * 1e6},
                         {"idle_us", r.idle * 1e6},
                         {"efficiency", row.efficiency},
                         {"peak_memory_bytes", r.peak_memory},
                         {"last_loss", r.last_loss ? nlohmann::ordered_json(*r.last_loss) : nullptr}});
  }
  out << j.dump(2) << "\n";
}

}  // namespace

int run_train(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const TrainCommandOptions& options = *parsed;
  // Fail before the runs, not after them.
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();

  const auto start = std::chrono::steady_clock::now();
  std::vector<TrainingResult> results;
  for (int p : options.devices) {
    const std::string text = run_in_child(fmt::format("--devices {}", p), [&] {
      const bool traced = p == options.devices.back();
      return nlohmann::json(run_training(options.setup, options.platform, split.simgrid, p,
                                         global_batch(options, p), traced ? options.trace_path : ""))
          .dump();
    });
    results.push_back(nlohmann::json::parse(text).get<TrainingResult>());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  const std::string source = simgrid_source(options.platform, simgrid_args);
  const auto rows = make_rows(results);
  write_table(std::cout, options, source, rows);
  std::cout << fmt::format("\n# {} simulations, one per device count, in {:.2f} s wall time\n", rows.size(),
                           wall);

  if (!options.csv_path.empty())
    write_file_atomically(options.csv_path, [&](std::ostream& out) { write_csv(out, rows); });
  const auto json = [&](std::ostream& out) { write_json(out, options, simgrid_args, rows, wall); };
  if (!options.json_path.empty()) write_file_atomically(options.json_path, json);
  if (!options.plot_prefix.empty()) {
    write_plots(python, "plot_train.py", options.json_path, options.plot_prefix, json);
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  }
  if (!options.trace_path.empty())
    std::cout << fmt::format("# trace of the {}-device run: {}\n", options.devices.back(), options.trace_path);
  return 0;
}

}  // namespace spmdsim::cli
