#include "commands/collectives/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands/collectives/options.hpp"
#include "commands/collectives/output.hpp"
#include "commands/collectives/plan.hpp"
#include "commands/collectives/row_run.hpp"
#include "common/command_line.hpp"
#include "common/output_files.hpp"
#include "common/plotting.hpp"
#include "common/progress_bar.hpp"
#include "common/rows.hpp"
#include "common/shard.hpp"
#include "common/shard_files.hpp"
#include "common/simulation_start.hpp"
#include "common/sizes.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::cli::collectives {
namespace {

// The reductions compute in --dtype on the devices: each must have a peak for it (or the float32 one it
// falls back to), or the sweep would stop at its first reduction. Throws UsageError listing those it has.
void check_reduction_dtype(const Simulation& sim, const SweepOptions& options, int devices) {
  const auto reduction = std::find_if(options.collectives.begin(), options.collectives.end(),
                                      [](const Collective* c) { return c->redop != "none"; });
  if (reduction == options.collectives.end()) return;
  for (int d = 0; d < devices; ++d) {
    const DeviceSpec& spec = sim.platform().devices[static_cast<std::size_t>(d)].spec;
    try {
      spec.peak_flops_for(options.dtype);
    } catch (const std::invalid_argument&) {
      std::vector<std::string_view> valid;
      for (const auto& [dtype, peak] : spec.peak_flops) valid.push_back(dtype_name(dtype));
      throw UsageError(
          fmt::format("--dtype {}: {} reduces in it, but the {} devices have no peak FLOP/s for it; "
                      "valid: {}",
                      dtype_name(options.dtype), (*reduction)->name, spec.model, fmt::join(valid, ", ")));
    }
  }
}

// The JSON's notes (rows left out, and why), in the order the table shows them: the collectives with rows
// in the plan's order, then those without. From the whole plan, so that every shard has the same.
std::vector<std::string> sweep_notes(const Plan& plan, const std::vector<const Collective*>& collectives) {
  std::vector<const Collective*> order;
  for (const auto& row : plan.rows)
    if (order.empty() || order.back() != row.collective) order.push_back(row.collective);
  for (const auto* c : collectives)
    if (std::none_of(plan.rows.begin(), plan.rows.end(), [&](const auto& r) { return r.collective == c; }))
      order.push_back(c);
  std::vector<std::string> notes;
  for (const auto* c : order)
    if (const auto it = plan.notes.find(c); it != plan.notes.end())
      for (const auto& text : it->second) notes.push_back(fmt::format("{}: {}", c->name, text));
  return notes;
}

// A row's configuration, as the sweep's identity takes it (shard_files.hpp).
std::string row_label(const PlannedRow& row) {
  return fmt::format("{} {} p={} bytes={}", row.collective->name, row.algorithm, row.p, row.bytes);
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const SweepOptions& options = *parsed;
  // Fail before the sweep, not after it.
  OutputFiles outputs({{"--csv", options.csv_path}, {"--json", options.json_path}}, options.plot_prefix);
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();

  const int max_devices = *std::max_element(options.devices.begin(), options.devices.end());
  const int channels = sweep_channels(options);
  const HostLimits limits = read_host_limits();
  const ActorContexts contexts =
      fit_actor_contexts(split.simgrid, sweep_demand(max_devices, channels, 0).actors, limits);
  AbstractThreshold threshold = options.abstract_above
                                    ? AbstractThreshold{*options.abstract_above, "--abstract-above"}
                                    : default_abstract_threshold(max_devices, channels, contexts, limits);
  const Plan plan = make_plan(options, threshold.bytes);
  check_real_rows_fit(plan, channels, threshold, contexts, limits);
  if (options.shard) check_shard_has_rows(*options.shard, plan.rows.size());
  // The plan's rows this run runs: all of them, or the slice --shard names.
  std::vector<std::size_t> mine(plan.rows.size());
  std::iota(mine.begin(), mine.end(), std::size_t{0});
  if (options.shard) mine = shard_rows(*options.shard, plan.rows.size());

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  const SimulationOptions simulation_options{.channels = options.channels,
                                             .protocol = options.protocol,
                                             .dimension_algorithms = options.dimension_algorithms,
                                             .aggregate_ring_phases = options.aggregate,
                                             .timelines = false};  // the sweep reads totals only
  const auto simulation = start_simulation(options.platform, split.simgrid, max_devices, simulation_options);
  Simulation& sim = *simulation;
  check_reduction_dtype(sim, options, max_devices);

  SweepInfo info{.platform = sim.platform().description,
                 .chosen = &options.platform,
                 .simgrid = simgrid_settings(),
                 .simgrid_source = simgrid_source(options.platform, simgrid_args),
                 .simgrid_args = simgrid_args,
                 .dtype = options.dtype,
                 .abstract_above = threshold.bytes,
                 .abstract_source = threshold.source,
                 .check = options.check,
                 .sizes = fmt::format("{} to {}, x{}", size_text(options.min_bytes),
                                      size_text(options.max_bytes), options.step_factor),
                 .devices = fmt::format("{}", fmt::join(options.devices, ", ")),
                 .aggregate = options.aggregate,
                 .dimension_algorithms = options.dimension_algorithms,
                 .channels = options.channels,
                 .protocol = options.protocol};

  std::size_t algorithm_width = std::string_view("algorithm").size();
  for (const auto& row : plan.rows) algorithm_width = std::max(algorithm_width, row.algorithm.size());
  Rows results{.columns = sweep_columns(algorithm_width)};
  TableWriter table(std::cout, results.columns);
  table.header(info);
  if (options.shard)
    std::cout << fmt::format(
        "# shard:    {} ({} of the sweep's {} rows; spmdsim merge joins the shards' files)\n",
        shard_text(*options.shard), mine.size(), plan.rows.size());
  ProgressBar progress(mine.size(), isatty(STDERR_FILENO) && mine.size() > 20);

  const Collective* current = nullptr;
  const auto close_section = [&] {
    if (current == nullptr) return;
    auto it = plan.notes.find(current);
    if (it == plan.notes.end()) return;
    for (const auto& text : it->second) table.note(text);
  };
  // One input per collective, device count and size, shared by its algorithms: they see the same data.
  std::optional<Array> input;
  const PlannedRow* input_for = nullptr;
  Seconds simulated = 0;
  progress.show(0);
  for (const std::size_t index : mine) {
    const PlannedRow& row = plan.rows[index];
    if (row.collective != current) {
      progress.clear();
      close_section();
      current = row.collective;
      table.section(*current);
    }
    if (input_for == nullptr || input_for->collective != row.collective || input_for->p != row.p ||
        input_for->bytes != row.bytes) {
      input.reset();
      input = row.abstract ? Array::abstract({row.p, row.elements_in}, options.dtype)
                           : random_input(row, options.dtype);
      input_for = &row;
    }
    const RowResult result = run_row_in_child(sim, row, *input, options.check, simulation_options);
    simulated += result.simulated;
    results.cells.push_back(row_cells(result, options.dtype));
    progress.clear();
    table.row(results.cells.back());
    progress.show(results.cells.size());
  }
  input.reset();
  progress.clear();
  close_section();
  for (const auto* c : options.collectives)
    if (std::none_of(plan.rows.begin(), plan.rows.end(), [&](const auto& r) { return r.collective == c; })) {
      current = c;
      table.section(*c);
      close_section();
    }
  const double wall = progress.elapsed();
  std::cout << fmt::format("\n# {} rows in {:.2f} s wall time; simulated time {:.6f} s\n",
                           results.cells.size(), wall, simulated);

  const std::vector<std::string> notes = sweep_notes(plan, options.collectives);
  const auto json = [&](std::ostream& out) { write_json(out, info, results, notes, wall, simulated); };
  std::optional<ShardTag> tag;
  if (options.shard) {
    std::vector<std::string> labels;
    for (const auto& row : plan.rows) labels.push_back(row_label(row));
    tag = shard_tag("collectives", *options.shard, labels, json);
  }
  if (!options.csv_path.empty()) outputs.write(options.csv_path, csv_writer(tag, results));
  if (!options.json_path.empty()) outputs.write(options.json_path, json_writer(tag, json));
  if (!options.plot_prefix.empty()) write_plots(python, "plot_collectives.py", outputs, json);
  outputs.commit();
  if (!options.plot_prefix.empty())
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  return 0;
}

}  // namespace spmdsim::cli::collectives
