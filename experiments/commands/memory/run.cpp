#include "commands/memory/run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands/memory/fit_search.hpp"
#include "commands/memory/memory_run.hpp"
#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/forked_run.hpp"
#include "common/model_options.hpp"
#include "common/platform_options.hpp"
#include "common/plotting.hpp"
#include "common/training_options.hpp"

namespace spmdsim::cli::memory {
namespace {

namespace po = boost::program_options;

// The tags in the order the table, the CSV, the JSON and the plot show them: model states first.
constexpr std::array<MemoryTag, kNumMemoryTags> kTagOrder = {
    MemoryTag::parameters,  MemoryTag::optimizer_state,    MemoryTag::gradients,
    MemoryTag::activations, MemoryTag::input_shards,       MemoryTag::replicated_args,
    MemoryTag::outputs,     MemoryTag::collective_scratch, MemoryTag::communication_buckets,
    MemoryTag::temporaries};
// The table's short headers, in kTagOrder.
constexpr std::array<const char*, kNumMemoryTags> kTagHeaders = {
    "params",     "opt_state", "grads",   "activ",   "inputs",
    "replicated", "outputs",   "scratch", "buckets", "temps"};

enum class FitTarget { none, batch, layers };

struct MemoryCommandOptions {
  std::vector<ModelChoice> models;
  std::vector<models::Strategy> strategies;
  MemorySetup setup;  // the model and strategy of each run are set per run
  std::string optimizer_name;
  bool fused_optimizer = false;
  FitTarget fit = FitTarget::none;
  std::int64_t fit_max = 0;
  ChosenPlatform platform;
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
};

FitTarget parse_fit(const std::string& text) {
  if (text.empty()) return FitTarget::none;
  if (text == "batch") return FitTarget::batch;
  if (text == "layers") return FitTarget::layers;
  throw UsageError(fmt::format("unknown --fit '{}'; valid: batch, layers", text));
}

std::string_view fit_name(FitTarget fit) {
  return fit == FitTarget::batch ? "batch" : "layers";
}

std::optional<MemoryCommandOptions> parse(const std::vector<std::string>& args) {
  std::string devices, model_list, strategy_list, batch, micro_batches, precision, fit, fit_max;
  PlatformRequest platform;
  ModelRequest model;
  MemoryCommandOptions options;
  po::options_description described("spmdsim memory options");
  const std::string model_help =
      fmt::format("models to size, a comma-separated list of: {} (docs/memory.md)", model_names_text());
  described.add_options()("help,h", "show this help")(
      "devices", po::value(&devices)->default_value("8"),
      fmt::format("devices N (1 to {}), the first N of the platform", kMaxDevices).c_str())(
      "model", po::value(&model_list)->default_value("gpt2_small"), model_help.c_str())(
      "strategy", po::value(&strategy_list)->default_value("dp,zero1,zero2,zero3"),
      "strategies, a comma-separated list of dp, zero1, zero2, zero3 (docs/training.md)")(
      "batch", po::value(&batch)->default_value("1"),
      "per-device batch: samples (MLP) or sequences (transformer)")(
      "micro-batches", po::value(&micro_batches)->default_value("1"),
      "gradient accumulation: micro-batches per device and step (dividing --batch)")(
      "precision", po::value(&precision)->default_value("mixed_bf16"),
      "mixed_bf16 (bf16 params and gradients, fp32 master weights: the ZeRO paper's case) or fp32")(
      "optimizer", po::value(&options.optimizer_name)->default_value("adam"), "adam, momentum (0.9) or sgd")(
      "fused-optimizer", po::bool_switch(&options.fused_optimizer), kFusedOptimizerHelp);
  add_model_shape_options(described, model);
  described.add_options()(
      "fit", po::value(&fit),
      "instead of one step per model and strategy, search for the largest value that fits: "
      "batch (per-device batch) or layers (transformer blocks of the model's shape)")(
      "fit-max", po::value(&fit_max),
      "--fit: the search's upper bound (default: 65536 for batch, 4096 for layers)");
  add_platform_options(described, platform);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path),
      "also write the rows (and device 0's timelines) as JSON to this file")(
      "plot", po::value(&options.plot_prefix),
      "also plot the peaks by tag, stacked per strategy with the capacity line, and device 0's memory over "
      "the step by tag, to PREFIX.png and PREFIX.svg (python3 with matplotlib; not with --fit)");
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim memory [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
        << "Device memory of one training step for each model and strategy (abstract: shapes only), by\n"
        << "tag, against the ZeRO paper's model states and the device capacity; or, with --fit, the\n"
        << "largest per-device batch or number of transformer blocks that fits.\n\n"
        << described << "\n";
    return std::nullopt;
  }

  auto& setup = options.setup;
  setup.devices = static_cast<int>(values.attributed({"devices"}, [&] {
    const auto n = parse_count(devices, "--devices", 1);
    if (n > kMaxDevices)
      throw UsageError(fmt::format("--devices must be from 1 to {} (got {})", kMaxDevices, n));
    return n;
  }));
  options.fit = values.attributed({"fit"}, [&] { return parse_fit(fit); });
  options.models =
      values.attributed({"model", "layers", "hidden", "heads", "seq-len", "vocab", "recompute"}, [&] {
        const auto names = split_list(model_list);
        ModelRequest shape = model;
        // --fit layers searches the layers: a custom shape needs the other sizes only (and --layers is
        // refused below).
        if (options.fit == FitTarget::layers && shape.layers.empty() &&
            std::find(names.begin(), names.end(), "custom") != names.end())
          shape.layers = std::to_string(1);  // not = "1": GCC 12 warns falsely (-Wrestrict, bug 105329)
        return choose_models(names, shape);
      });
  options.strategies = values.attributed({"strategy"}, [&] {
    std::vector<models::Strategy> chosen;
    for (const auto& name : split_list(strategy_list)) {
      const auto strategy = parse_strategy_option(name);
      if (std::find(chosen.begin(), chosen.end(), strategy) != chosen.end())
        throw UsageError(fmt::format("--strategy names '{}' twice", name));
      chosen.push_back(strategy);
    }
    if (chosen.empty()) throw UsageError("--strategy names no strategy");
    return chosen;
  });
  setup.per_device_batch = values.attributed({"batch"}, [&] { return parse_count(batch, "--batch", 1); });
  setup.train_options.micro_batches = static_cast<int>(
      values.attributed({"micro-batches"}, [&] { return parse_count(micro_batches, "--micro-batches", 1); }));
  setup.train_options.precision =
      values.attributed({"precision"}, [&] { return parse_precision(precision); });
  setup.optimizer = values.attributed({"optimizer", "fused-optimizer"}, [&] {
    return make_optimizer(options.optimizer_name, 1e-4, options.fused_optimizer);
  });
  values.attributed({"fit", "fit-max", "batch", "micro-batches", "model", "layers", "plot"}, [&] {
    if (options.fit != FitTarget::batch && setup.per_device_batch % setup.train_options.micro_batches != 0)
      throw UsageError(fmt::format("--batch {} is not divisible by --micro-batches {}",
                                   setup.per_device_batch, setup.train_options.micro_batches));
    if (options.fit == FitTarget::none) {
      if (!fit_max.empty()) throw UsageError("--fit-max bounds the search of --fit batch or --fit layers");
      return;
    }
    if (!options.plot_prefix.empty())
      throw UsageError("--plot and --fit exclude each other: the plot shows one step per model and strategy");
    if (options.fit == FitTarget::batch && !values.map()["batch"].defaulted())
      throw UsageError("--batch and --fit batch exclude each other: the search chooses the batch");
    if (options.fit == FitTarget::layers) {
      if (!model.layers.empty())
        throw UsageError("--layers and --fit layers exclude each other: the search chooses the layers");
      for (const auto& m : options.models)
        if (!m.is_transformer())
          throw UsageError(
              fmt::format("--fit layers needs transformers; --model '{}' has no blocks", m.name));
    }
    options.fit_max = fit_max.empty() ? (options.fit == FitTarget::batch ? 65536 : 4096)
                                      : parse_count(fit_max, "--fit-max", 1);
  });
  options.platform = values.attributed({"topology", "preset", "nodes", "platform", "devices"},
                                       [&] { return choose_platform(platform, setup.devices); });
  return options;
}

// ---------------------------------------------------------------------------------------------------------
// The runs: each in its own child process.

struct Row {
  std::string model;
  models::Strategy strategy = models::Strategy::dp;
  MemoryMeasurement measurement;
  double zero_formula = 0;  // bytes
};

MemoryMeasurement run_one(const MemorySetup& setup, const ChosenPlatform& platform,
                          const std::vector<std::string>& simgrid_argv) {
  const std::string what = fmt::format(
      "--model {} --strategy {} --batch {}{}", setup.model.name,
      models::strategy_name(setup.train_options.strategy), setup.per_device_batch,
      setup.model.is_transformer() ? fmt::format(" ({} layers)", setup.model.transformer->layers) : "");
  const std::string text = run_in_child(
      what, [&] { return nlohmann::json(measure_memory(setup, platform, simgrid_argv)).dump(); });
  return nlohmann::json::parse(text).get<MemoryMeasurement>();
}

MemorySetup setup_for(const MemoryCommandOptions& options, const ModelChoice& model,
                      models::Strategy strategy) {
  MemorySetup setup = options.setup;
  setup.model = model;
  setup.train_options.strategy = strategy;
  return setup;
}

// ---------------------------------------------------------------------------------------------------------
// The reports.

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<std::string> setting_texts(const MemoryMeasurement& m) {
  std::vector<std::string> settings;
  for (const auto& [key, value] : m.simgrid) settings.push_back(key + ":" + value);
  return settings;
}

void write_header(std::ostream& out, const MemoryCommandOptions& options, const std::string& simgrid_source,
                  const MemoryMeasurement& first) {
  const auto& setup = options.setup;
  out << "# spmdsim memory: device memory of one training step, abstract (shapes only), the model state made "
         "on "
         "the devices\n"
      << fmt::format("# platform: {} ({})\n", first.platform, options.platform.summary)
      << fmt::format("# simgrid:  {} ({})\n", fmt::join(setting_texts(first), ", "), simgrid_source)
      << fmt::format("# training: {} devices, {}{}, {}, micro-batches {}{}\n", setup.devices,
                     options.optimizer_name, options.fused_optimizer ? " fused" : "",
                     precision_name(setup.train_options.precision), setup.train_options.micro_batches,
                     options.fit == FitTarget::batch
                         ? std::string()
                         : fmt::format(", per-device batch {} (MLP samples, transformer sequences)",
                                       setup.per_device_batch));
  for (const auto& model : options.models)
    out << fmt::format("# model:    {}{}\n", model.description(),
                       options.fit == FitTarget::layers ? "; the search varies L" : "");
}

void write_table(std::ostream& out, const std::vector<Row>& rows) {
  out << "# legend:   MiB = 2^20 bytes. device = the device with the largest peak (the first among equals); "
         "the "
         "tag columns are what its buffers held at that peak, which is over the state's creation and the "
         "step; "
         "model states = its parameters + optimizer state + gradients just before the update; ZeRO = the "
         "paper's (P + G + K) Psi split (docs/memory.md); diff(B) = model states - ZeRO, in bytes\n";
  out << fmt::format("#{:<11}  {:<8}  {:>6}  {:>10}", "model", "strategy", "device", "peak(MiB)");
  for (const char* header : kTagHeaders) out << fmt::format("  {:>10}", header);
  out << fmt::format("  {:>12}  {:>10}  {:>8}  {:>13}  {}\n", "states(MiB)", "ZeRO(MiB)", "diff(B)",
                     "capacity(MiB)", "fits");
  for (const auto& row : rows) {
    const auto& m = row.measurement;
    out << fmt::format("{:<12}  {:<8}", row.model, models::strategy_name(row.strategy));
    if (m.out_of_memory) {
      out << fmt::format("  {:>6}  {:>10}", "-", "OOM");
      for (std::size_t i = 0; i < kTagOrder.size(); ++i) out << fmt::format("  {:>10}", "-");
      out << fmt::format("  {:>12}  {:>10.3f}  {:>8}  {:>13.3f}  {}\n", "-", row.zero_formula / kMiB, "-",
                         m.capacity / kMiB, "out of memory");
      continue;
    }
    out << fmt::format("  {:>6}  {:>10.3f}", m.device, m.peak / kMiB);
    for (auto tag : kTagOrder)
      out << fmt::format("  {:>10.3f}", m.at_peak[static_cast<std::size_t>(tag)] / kMiB);
    out << fmt::format("  {:>12.3f}  {:>10.3f}  {:>+8.0f}  {:>13.3f}  {}\n", m.model_states / kMiB,
                       row.zero_formula / kMiB, m.model_states - row.zero_formula, m.capacity / kMiB, "yes");
  }
  for (const auto& row : rows)
    if (row.measurement.out_of_memory) {
      out << fmt::format("# out of memory: {} {}:\n", row.model, models::strategy_name(row.strategy));
      std::istringstream message(*row.measurement.out_of_memory);
      for (std::string line; std::getline(message, line);) out << "#   " << line << "\n";
    }
}

void write_csv(std::ostream& out, const std::vector<Row>& rows) {
  out << "model,strategy,out_of_memory,device,peak_bytes";
  for (auto tag : kTagOrder) out << "," << memory_tag_name(tag) << "_bytes";
  out << ",model_states_bytes,zero_formula_bytes,capacity_bytes\n";
  for (const auto& row : rows) {
    const auto& m = row.measurement;
    out << fmt::format("{},{},{},", row.model, models::strategy_name(row.strategy), m.out_of_memory ? 1 : 0);
    if (m.out_of_memory) {
      out << std::string(kNumMemoryTags + 3, ',');  // device, peak, the tags and model states: empty
    } else {
      out << fmt::format("{},{:.0f}", m.device, m.peak);
      for (auto tag : kTagOrder) out << fmt::format(",{:.0f}", m.at_peak[static_cast<std::size_t>(tag)]);
      out << fmt::format(",{:.0f},", m.model_states);
    }
    out << fmt::format("{},{:.0f}\n", row.zero_formula,
                       m.capacity);  // the formula's Psi / N may be fractional
  }
}

nlohmann::ordered_json command_json(const MemoryCommandOptions& options,
                                    const std::vector<std::string>& simgrid_args,
                                    const MemoryMeasurement& first, double wall_seconds) {
  const auto& setup = options.setup;
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["command"] = "spmdsim memory";
  add_platform_json(j, options.platform, first.platform, first.simgrid, simgrid_args);
  j["devices"] = setup.devices;
  j["models"] = nlohmann::ordered_json::array();
  for (const auto& model : options.models) j["models"].push_back(model.to_json());
  j["micro_batches"] = setup.train_options.micro_batches;
  j["precision"] = precision_name(setup.train_options.precision);
  j["optimizer"] = options.optimizer_name;
  j["fused_optimizer"] = options.fused_optimizer;
  j["wall_time_s"] = wall_seconds;
  return j;
}

void write_json(std::ostream& out, nlohmann::ordered_json j, const MemoryCommandOptions& options,
                const std::vector<Row>& rows) {
  j["per_device_batch"] = options.setup.per_device_batch;
  j["reported_device"] = "the device with the largest peak (the first among equals); timelines: device 0";
  j["tags"] = nlohmann::ordered_json::array();
  for (auto tag : kTagOrder) j["tags"].push_back(memory_tag_name(tag));
  // Device 0's ledger in each row's "timeline": [time (s), tag (an index into timeline_tags), delta (bytes)].
  j["timeline_tags"] = nlohmann::ordered_json::array();
  for (int t = 0; t < kNumMemoryTags; ++t)
    j["timeline_tags"].push_back(memory_tag_name(static_cast<MemoryTag>(t)));
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const auto& m = row.measurement;
    nlohmann::ordered_json r = {{"model", row.model},
                                {"strategy", models::strategy_name(row.strategy)},
                                {"out_of_memory", m.out_of_memory ? nlohmann::ordered_json(*m.out_of_memory)
                                                                  : nlohmann::ordered_json(nullptr)},
                                {"capacity_bytes", m.capacity},
                                {"zero_formula_bytes", row.zero_formula}};
    if (!m.out_of_memory) {
      r["device"] = m.device;
      r["device_name"] = m.device_name;
      r["peak_bytes"] = m.peak;
      r["at_peak_bytes"] = nlohmann::ordered_json::object();
      for (auto tag : kTagOrder)
        r["at_peak_bytes"][memory_tag_name(tag)] = m.at_peak[static_cast<std::size_t>(tag)];
      r["model_states_bytes"] = m.model_states;
      r["step_start_s"] = m.step_start;
      r["step_end_s"] = m.step_end;
      r["timeline"] = nlohmann::ordered_json::array();
      for (const auto& event : m.timeline)
        r["timeline"].push_back({event.time, static_cast<int>(event.tag), event.delta});
    }
    j["rows"].push_back(std::move(r));
  }
  out << j.dump(2) << "\n";
}

// --fit: one line per model and strategy, with the runs of the search by value.
struct FitRow {
  std::string model;
  models::Strategy strategy = models::Strategy::dp;
  FitBounds search;
  std::map<std::int64_t, MemoryMeasurement> runs;

  const MemoryMeasurement* at_largest() const { return search.largest ? &runs.at(*search.largest) : nullptr; }
  const MemoryMeasurement* at_failing() const {
    return search.first_failing ? &runs.at(*search.first_failing) : nullptr;
  }
  // A run's platform figures (the capacity): every run has them.
  const MemoryMeasurement& any_run() const { return runs.begin()->second; }
};

// What one step of the search moves: the batch by --micro-batches (each micro-batch gets a whole share), the
// layers by one.
std::int64_t fit_unit(const MemoryCommandOptions& options) {
  return options.fit == FitTarget::batch ? options.setup.train_options.micro_batches : 1;
}

std::string fit_value_text(const std::optional<std::int64_t>& value) {
  return value ? fmt::format("{}", *value) : std::string("none");
}

void write_fit_table(std::ostream& out, const MemoryCommandOptions& options,
                     const std::vector<FitRow>& rows) {
  const bool batch = options.fit == FitTarget::batch;
  const std::int64_t unit = fit_unit(options);
  out << fmt::format(
      "# fit:      the largest {} that fits, searched over {} to {} (--fit-max){}: doubling from the "
      "smallest "
      "until a run is out of memory, then bisection; each value one step in its own simulation\n",
      batch ? "per-device batch" : "number of transformer blocks (layers)", unit, options.fit_max * unit,
      batch && unit > 1 ? fmt::format(" in steps of --micro-batches {}", unit) : std::string());
  out << "# legend:   largest = fits; next = the next candidate, out of memory (none: the bound fits); "
         "peak = the largest device's peak at `largest`\n";
  out << fmt::format("#{:<11}  {:<8}  {:>8}  {:>8}  {:>10}  {:>13}  {:>4}\n", "model", "strategy", "largest",
                     "next", "peak(MiB)", "capacity(MiB)", "runs");
  for (const auto& row : rows) {
    const auto& s = row.search;
    const auto scaled = [&](const std::optional<std::int64_t>& v) {
      return v ? std::optional<std::int64_t>(*v * unit) : std::nullopt;
    };
    out << fmt::format(
        "{:<12}  {:<8}  {:>8}  {:>8}  {:>10}  {:>13.3f}  {:>4}\n", row.model,
        models::strategy_name(row.strategy), fit_value_text(scaled(s.largest)),
        fit_value_text(scaled(s.first_failing)),
        row.at_largest() ? fmt::format("{:.3f}", row.at_largest()->peak / kMiB) : std::string("-"),
        row.any_run().capacity / kMiB, s.runs);
  }
  for (const auto& row : rows)
    if (row.at_failing()) {
      std::istringstream message(*row.at_failing()->out_of_memory);
      std::string first_line;
      std::getline(message, first_line);
      out << fmt::format("# {} {} at {} {}: {}\n", row.model, models::strategy_name(row.strategy),
                         fit_name(options.fit), *row.search.first_failing * unit, first_line);
    }
}

void write_fit_csv(std::ostream& out, const MemoryCommandOptions& options, const std::vector<FitRow>& rows) {
  const std::int64_t unit = fit_unit(options);
  out << fmt::format("model,strategy,fit,largest,next,peak_bytes_at_largest,capacity_bytes,runs\n");
  for (const auto& row : rows) {
    const auto& s = row.search;
    out << fmt::format("{},{},{},{},{},{},{},{}\n", row.model, models::strategy_name(row.strategy),
                       fit_name(options.fit), s.largest ? fmt::format("{}", *s.largest * unit) : "",
                       s.first_failing ? fmt::format("{}", *s.first_failing * unit) : "",
                       row.at_largest() ? fmt::format("{}", row.at_largest()->peak) : "",
                       row.any_run().capacity, s.runs);
  }
}

void write_fit_json(std::ostream& out, nlohmann::ordered_json j, const MemoryCommandOptions& options,
                    const std::vector<FitRow>& rows) {
  const std::int64_t unit = fit_unit(options);
  j["fit"] = {
      {"target", fit_name(options.fit)}, {"lower_bound", unit}, {"upper_bound", options.fit_max * unit}};
  if (options.fit == FitTarget::layers) j["per_device_batch"] = options.setup.per_device_batch;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const auto& s = row.search;
    const auto value = [&](const std::optional<std::int64_t>& v) {
      return v ? nlohmann::ordered_json(*v * unit) : nlohmann::ordered_json(nullptr);
    };
    j["rows"].push_back(
        {{"model", row.model},
         {"strategy", models::strategy_name(row.strategy)},
         {"largest", value(s.largest)},
         {"next", value(s.first_failing)},
         {"peak_bytes_at_largest",
          row.at_largest() ? nlohmann::ordered_json(row.at_largest()->peak) : nullptr},
         {"capacity_bytes", row.any_run().capacity},
         {"next_out_of_memory",
          row.at_failing() ? nlohmann::ordered_json(*row.at_failing()->out_of_memory) : nullptr},
         {"runs", s.runs}});
  }
  out << j.dump(2) << "\n";
}

// The files --csv and --json ask for, each written whole or not at all.
void write_files(const MemoryCommandOptions& options, const std::function<void(std::ostream&)>& csv,
                 const std::function<void(std::ostream&)>& json) {
  if (!options.csv_path.empty()) write_file_atomically(options.csv_path, csv);
  if (!options.json_path.empty()) write_file_atomically(options.json_path, json);
}

int run_fit(const MemoryCommandOptions& options, const SplitArguments& split) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<FitRow> rows;
  for (const auto& model : options.models)
    for (auto strategy : options.strategies) {
      const MemorySetup base = setup_for(options, model, strategy);
      FitRow row{.model = model.name, .strategy = strategy};
      row.search = search_largest_fit(options.fit_max, [&](std::int64_t value) {
        MemorySetup setup = base;
        if (options.fit == FitTarget::batch)
          setup.per_device_batch = value * fit_unit(options);
        else
          setup.model = model.with_layers(value);
        const auto& run =
            row.runs.emplace(value, run_one(setup, options.platform, split.simgrid)).first->second;
        return !run.out_of_memory;
      });
      rows.push_back(std::move(row));
    }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  const auto& first = rows.front().any_run();
  write_header(std::cout, options, simgrid_source(options.platform, simgrid_args), first);
  write_fit_table(std::cout, options, rows);
  int runs = 0;
  for (const auto& row : rows) runs += row.search.runs;
  std::cout << fmt::format("\n# {} simulations, one per step, in {:.2f} s wall time\n", runs, wall);
  write_files(
      options, [&](std::ostream& out) { write_fit_csv(out, options, rows); },
      [&](std::ostream& out) {
        write_fit_json(out, command_json(options, simgrid_args, first, wall), options, rows);
      });
  return 0;
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  MemoryCommandOptions options = *parsed;
  if (options.fit != FitTarget::none) return run_fit(options, split);
  // Fail before the runs, not after them.
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();
  options.setup.keep_timeline = !options.plot_prefix.empty() || !options.json_path.empty();

  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  for (const auto& model : options.models)
    for (auto strategy : options.strategies) {
      const MemorySetup setup = setup_for(options, model, strategy);
      rows.push_back(
          {model.name, strategy, run_one(setup, options.platform, split.simgrid), zero_formula_bytes(setup)});
    }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  write_header(std::cout, options, simgrid_source(options.platform, simgrid_args), rows.front().measurement);
  write_table(std::cout, rows);
  std::cout << fmt::format("\n# {} simulations, one per model and strategy, in {:.2f} s wall time\n",
                           rows.size(), wall);
  const auto json = [&](std::ostream& out) {
    write_json(out, command_json(options, simgrid_args, rows.front().measurement, wall), options, rows);
  };
  write_files(
      options, [&](std::ostream& out) { write_csv(out, rows); }, json);
  if (!options.plot_prefix.empty()) {
    write_plots(python, "plot_memory.py", options.json_path, options.plot_prefix, json);
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  }
  return 0;
}

}  // namespace spmdsim::cli::memory
