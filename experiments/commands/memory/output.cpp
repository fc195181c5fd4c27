#include "commands/memory/output.hpp"

#include <array>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/training_options.hpp"
#include "spmdsim/models/memory_tags.hpp"

namespace spmdsim::cli::memory {
namespace {

// The tags in the order the table, the CSV, the JSON and the plot show them: model states first. A function,
// not a namespace-scope array: the models' tags are registered during static initialisation
// (spmdsim/models/memory_tags.hpp), whose order between files is not ours to choose.
const std::array<MemoryTag, 10>& tag_order() {
  static const std::array<MemoryTag, 10> order = {
      models::tags::parameters,  models::tags::optimizer_state, models::tags::gradients,
      models::tags::activations, MemoryTag::input_shards,       MemoryTag::replicated_args,
      MemoryTag::outputs,        MemoryTag::collective_scratch, models::tags::communication_buckets,
      MemoryTag::temporaries};
  return order;
}
// The table's short headers, in tag_order().
constexpr std::array<const char*, 10> kTagHeaders = {"params",  "opt_state",  "grads",   "activ",
                                                     "inputs",  "replicated", "outputs", "scratch",
                                                     "buckets", "temps"};

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<std::string> setting_texts(const MemoryMeasurement& m) {
  std::vector<std::string> settings;
  for (const auto& [key, value] : m.simgrid) settings.push_back(key + ":" + value);
  return settings;
}

// Bytes: whole in CSV, MiB in the table.
Cell mebibytes(Bytes bytes) {
  return {static_cast<std::int64_t>(std::llround(bytes)), fmt::format("{:.3f}", bytes / kMiB)};
}

}  // namespace

void write_header(std::ostream& out, const MemoryCommandOptions& options, const std::string& simgrid_source,
                  const MemoryMeasurement& first) {
  const auto& setup = options.setup;
  out << "# spmdsim memory: device memory of one training step, abstract (shapes only), the model state made "
         "on "
         "the devices\n"
      << fmt::format("# platform: {} ({})\n", first.platform, options.platform.summary)
      << fmt::format("# simgrid:  {} ({})\n", fmt::join(setting_texts(first), ", "), simgrid_source)
      << fmt::format("# training: {} devices, {}{}, {}, micro-batches {}{}{}\n", setup.devices,
                     options.optimizer_name, options.fused_optimizer ? " fused" : "",
                     precision_text(setup.train_options), setup.train_options.micro_batches,
                     setup.train_options.donate_state ? ", state donated to the update" : "",
                     options.fit == FitTarget::batch
                         ? std::string()
                         : fmt::format(", per-device batch {} (MLP samples, transformer sequences)",
                                       setup.per_device_batch));
  for (auto strategy : options.strategies) {
    const std::string zero = zero_options_text(setup.train_options.zero, strategy);
    if (!zero.empty()) out << fmt::format("# {}:    {}\n", models::strategy_name(strategy), zero);
  }
  for (const auto& model : options.models)
    out << fmt::format("# model:    {}{}\n", model.description(),
                       options.fit == FitTarget::layers ? "; the search varies L" : "");
}

Rows step_rows(const std::vector<Row>& rows) {
  Rows table{.columns = {{.key = "model", .header = "model", .width = 12, .left = true},
                         {.key = "strategy", .header = "strategy", .width = 8, .left = true},
                         {.key = "out_of_memory"},
                         {.key = "device", .header = "device", .width = 6},
                         {.key = "peak_bytes", .header = "peak(MiB)", .width = 10},
                         {.key = "pass_peak_bytes", .header = "pass(MiB)", .width = 10}}};
  for (std::size_t t = 0; t < tag_order().size(); ++t)
    table.columns.push_back({.key = std::string(memory_tag_name(tag_order()[t])) + "_bytes",
                             .header = kTagHeaders[t],
                             .width = 10});
  table.columns.insert(table.columns.end(),
                       {{.key = "model_states_bytes", .header = "states(MiB)", .width = 12},
                        {.key = "zero_formula_bytes", .header = "ZeRO(MiB)", .width = 10},
                        {.header = "diff(B)", .width = 8},
                        {.key = "capacity_bytes", .header = "capacity(MiB)", .width = 13},
                        {.header = "fits"}});
  for (const auto& row : rows) {
    const auto& m = row.measurement;
    const bool fits = !m.out_of_memory;
    std::vector<Cell> cells{text_cell(row.model),
                            text_cell(std::string(models::strategy_name(row.strategy))),
                            whole_cell(fits ? 0 : 1),
                            fits ? whole_cell(m.device) : empty_cell("-"),
                            fits ? mebibytes(m.peak) : empty_cell("OOM"),
                            fits ? mebibytes(m.pass_peak) : empty_cell("-")};
    for (auto tag : tag_order()) cells.push_back(fits ? mebibytes(m.at_peak[tag.index()]) : empty_cell("-"));
    cells.push_back(fits ? mebibytes(m.model_states) : empty_cell("-"));
    // The formula's Psi / N may be fractional: CSV writes it whole.
    cells.push_back(real_cell(row.zero_formula, fmt::format("{:.3f}", row.zero_formula / kMiB)));
    cells.push_back(fits ? empty_cell(fmt::format("{:+.0f}", m.model_states - row.zero_formula))
                         : empty_cell("-"));
    cells.push_back(mebibytes(m.capacity));
    cells.push_back(empty_cell(fits ? "yes" : "out of memory"));
    table.cells.push_back(std::move(cells));
  }
  return table;
}

void write_table(std::ostream& out, const std::vector<Row>& rows) {
  out << "# legend:   MiB = 2^20 bytes. device = the device with the largest peak (the first among equals); "
         "the "
         "tag columns are what its buffers held at that peak, which is over the state's creation and the "
         "step; pass = its peak in the step before the optimizer update (forward, backward, gradient "
         "reduction); "
         "model states = its parameters + optimizer state + gradients just before the update; ZeRO = the "
         "paper's (P + G + K) Psi split (docs/memory.md); diff(B) = model states - ZeRO, in bytes\n";
  cli::write_table(out, step_rows(rows));
  for (const auto& row : rows)
    if (row.measurement.out_of_memory) {
      out << fmt::format("# out of memory: {} {}:\n", row.model, models::strategy_name(row.strategy));
      std::istringstream message(*row.measurement.out_of_memory);
      for (std::string line; std::getline(message, line);) out << "#   " << line << "\n";
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
  j["reduce_dtype"] = dtype_name(setup.train_options.reduction_dtype());
  j["param_shard_dtype"] = dtype_name(setup.train_options.param_dtype());
  j["optimizer"] = options.optimizer_name;
  j["fused_optimizer"] = options.fused_optimizer;
  j["donate_state"] = setup.train_options.donate_state;
  j["wall_time_s"] = wall_seconds;
  return j;
}

void write_json(std::ostream& out, nlohmann::ordered_json j, const MemoryCommandOptions& options,
                const std::vector<Row>& rows) {
  j["per_device_batch"] = options.setup.per_device_batch;
  j["reported_device"] = "the device with the largest peak (the first among equals); timelines: device 0";
  j["tags"] = nlohmann::ordered_json::array();
  for (auto tag : tag_order()) j["tags"].push_back(memory_tag_name(tag));
  // Device 0's ledger in each row's "timeline": [time (s), tag (an index into timeline_tags), delta (bytes)].
  j["timeline_tags"] = nlohmann::ordered_json::array();
  for (const MemoryTag tag : memory_tags()) j["timeline_tags"].push_back(memory_tag_name(tag));
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
      r["pass_peak_bytes"] = m.pass_peak;
      r["at_peak_bytes"] = nlohmann::ordered_json::object();
      for (auto tag : tag_order()) r["at_peak_bytes"][memory_tag_name(tag)] = m.at_peak[tag.index()];
      r["model_states_bytes"] = m.model_states;
      r["step_start_s"] = m.step_start;
      r["step_end_s"] = m.step_end;
      r["timeline"] = nlohmann::ordered_json::array();
      for (const auto& event : m.timeline)
        r["timeline"].push_back({event.time, static_cast<int>(event.tag.index()), event.delta});
    }
    j["rows"].push_back(std::move(r));
  }
  out << j.dump(2) << "\n";
}

Rows fit_rows(const MemoryCommandOptions& options, const std::vector<FitRow>& rows) {
  const std::int64_t unit = fit_unit(options);
  Rows table{.columns = {{.key = "model", .header = "model", .width = 12, .left = true},
                         {.key = "strategy", .header = "strategy", .width = 8, .left = true},
                         {.key = "fit"},
                         {.key = "largest", .header = "largest", .width = 8},
                         {.key = "next", .header = "next", .width = 8},
                         {.key = "peak_bytes_at_largest", .header = "peak(MiB)", .width = 10},
                         {.key = "capacity_bytes", .header = "capacity(MiB)", .width = 13},
                         {.key = "runs", .header = "runs", .width = 4}}};
  // A value of the search, in the unit of the option it sets; "none" in the table when there is none.
  const auto value = [&](const std::optional<std::int64_t>& v) {
    return v ? whole_cell(*v * unit) : empty_cell("none");
  };
  for (const auto& row : rows) {
    const auto* largest = row.at_largest();
    const Bytes capacity = row.any_run().capacity;
    table.cells.push_back(
        {text_cell(row.model), text_cell(std::string(models::strategy_name(row.strategy))),
         text_cell(std::string(fit_name(options.fit))), value(row.search.largest),
         value(row.search.first_failing),
         largest ? real_cell(largest->peak, fmt::format("{:.3f}", largest->peak / kMiB)) : empty_cell("-"),
         real_cell(capacity, fmt::format("{:.3f}", capacity / kMiB)), whole_cell(row.search.runs)});
  }
  return table;
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
  cli::write_table(out, fit_rows(options, rows));
  for (const auto& row : rows)
    if (row.at_failing()) {
      std::istringstream message(*row.at_failing()->out_of_memory);
      std::string first_line;
      std::getline(message, first_line);
      out << fmt::format("# {} {} at {} {}: {}\n", row.model, models::strategy_name(row.strategy),
                         fit_name(options.fit), *row.search.first_failing * unit, first_line);
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
}  // namespace spmdsim::cli::memory
