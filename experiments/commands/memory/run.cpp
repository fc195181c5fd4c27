#include "commands/memory/run.hpp"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands/memory/fit_search.hpp"
#include "commands/memory/memory_run.hpp"
#include "commands/memory/options.hpp"
#include "commands/memory/output.hpp"
#include "common/command_line.hpp"
#include "common/forked_run.hpp"
#include "common/host_budget.hpp"
#include "common/output_files.hpp"
#include "common/plotting.hpp"
#include "common/progress_bar.hpp"
#include "common/rows.hpp"
#include "common/shard.hpp"
#include "common/shard_files.hpp"
#include "common/training_options.hpp"

namespace spmdsim::cli::memory {
namespace {

// One step's measurement in its own child.
ChildRun measurement_run(const MemorySetup& setup, const ChosenPlatform& platform,
                         const std::vector<std::string>& simgrid_argv) {
  return {
      fmt::format(
          "--model {} --strategy {} --batch {}{}", setup.model.name,
          models::strategy_name(setup.train_options.strategy), setup.per_device_batch,
          setup.model.is_transformer() ? fmt::format(" ({} layers)", setup.model.transformer->layers) : ""),
      [setup, &platform, &simgrid_argv] {
        return nlohmann::json(measure_memory(setup, platform, simgrid_argv)).dump();
      }};
}

MemoryMeasurement run_one(const MemorySetup& setup, const ChosenPlatform& platform,
                          const std::vector<std::string>& simgrid_argv) {
  const ChildRun run = measurement_run(setup, platform, simgrid_argv);
  return nlohmann::json::parse(run_in_child(run.what, run.work)).get<MemoryMeasurement>();
}

MemorySetup setup_for(const MemoryCommandOptions& options, const ModelChoice& model,
                      models::Strategy strategy) {
  MemorySetup setup = options.setup;
  setup.model = model;
  setup.train_options.strategy = strategy;
  // --param-shard-dtype is zero3's; the other strategies of the sweep keep their own layouts.
  if (strategy != models::Strategy::zero3) setup.train_options.param_shard_dtype = DType::bf16;
  return setup;
}

// The (model, strategy) pairs of the sweep, in the table's order.
std::vector<MemorySetup> sweep_setups(const MemoryCommandOptions& options) {
  std::vector<MemorySetup> setups;
  for (const auto& model : options.models)
    for (auto strategy : options.strategies) setups.push_back(setup_for(options, model, strategy));
  return setups;
}

// The sweep's rows this run measures: all of them, or the slice --shard names.
std::vector<std::size_t> rows_to_run(const MemoryCommandOptions& options, std::size_t total) {
  std::vector<std::size_t> mine(total);
  std::iota(mine.begin(), mine.end(), std::size_t{0});
  if (!options.shard) return mine;
  check_shard_has_rows(*options.shard, total);
  return shard_rows(*options.shard, total);
}

// The files --csv and --json ask for, put in place by the run's commit; a shard's say which rows they hold.
void write_files(const MemoryCommandOptions& options, const std::vector<MemorySetup>& sweep,
                 OutputFiles& outputs, const Rows& csv_rows, const std::function<void(std::ostream&)>& json) {
  std::optional<ShardTag> tag;
  if (options.shard) {
    std::vector<std::string> labels;
    for (const auto& setup : sweep)
      labels.push_back(
          fmt::format("{} {}", setup.model.name, models::strategy_name(setup.train_options.strategy)));
    tag = shard_tag("memory", *options.shard, labels, json);
    std::cout << fmt::format(
        "# shard {}: {} of the sweep's {} (model, strategy) pairs; spmdsim merge joins the "
        "shards' files\n",
        shard_text(*options.shard), tag->rows.size(), sweep.size());
  }
  if (!options.csv_path.empty()) outputs.write(options.csv_path, csv_writer(tag, csv_rows));
  if (!options.json_path.empty()) outputs.write(options.json_path, json_writer(tag, json));
}

int run_fit(const MemoryCommandOptions& options, const std::vector<MemorySetup>& sweep,
            const SplitArguments& split, OutputFiles& outputs) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<FitRow> rows;
  for (const std::size_t index : rows_to_run(options, sweep.size())) {
    const MemorySetup& base = sweep[index];
    FitRow row{.model = base.model.name, .strategy = base.train_options.strategy};
    row.search = search_largest_fit(options.fit_max, [&](std::int64_t value) {
      MemorySetup setup = base;
      if (options.fit == FitTarget::batch)
        setup.per_device_batch = value * fit_unit(options);
      else
        setup.model = base.model.with_layers(value);
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
  write_files(options, sweep, outputs, fit_rows(options, rows), [&](std::ostream& out) {
    write_fit_json(out, command_json(options, simgrid_args, first, wall), options, rows);
  });
  outputs.commit();
  return 0;
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  MemoryCommandOptions options = *parsed;
  OutputFiles outputs({{"--csv", options.csv_path}, {"--json", options.json_path}}, options.plot_prefix);
  // Abstract steps: the actors' stacks are all the host memory a run takes.
  const HostLimits limits = read_host_limits();
  const int channels = collective_channels(options.platform, {});
  const ActorContexts contexts =
      fit_actor_contexts(split.simgrid, training_actors(options.setup.devices, channels), limits);
  const auto demand = [channels](std::int64_t devices) {
    return HostDemand{.actors = training_actors(static_cast<int>(devices), channels), .abstract = true};
  };
  check_fits(fmt::format("--devices {}", options.setup.devices), "--devices", options.setup.devices, 1,
             demand, contexts, limits);
  const HostDemand step_demand = demand(options.setup.devices);
  if (options.fit != FitTarget::none) return run_fit(options, sweep_setups(options), split, outputs);
  // Fail before the runs, not after them.
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();
  options.setup.keep_timeline = !options.plot_prefix.empty() || !options.json_path.empty();
  const std::vector<MemorySetup> sweep = sweep_setups(options);

  const auto start = std::chrono::steady_clock::now();
  std::vector<MemorySetup> setups;
  std::vector<ChildRun> runs;
  for (const std::size_t index : rows_to_run(options, sweep.size())) {
    setups.push_back(sweep[index]);
    runs.push_back(measurement_run(setups.back(), options.platform, split.simgrid));
  }
  const int parallel = parallel_runs(options.jobs, step_demand, contexts, limits);
  ProgressBar progress(runs.size(), isatty(STDERR_FILENO) && runs.size() > 1, "simulations");
  progress.show(0);
  const auto texts = run_in_children(runs, parallel, [&](std::size_t done) { progress.show(done); });
  progress.clear();
  std::vector<Row> rows;
  for (std::size_t i = 0; i < setups.size(); ++i)
    rows.push_back({setups[i].model.name, setups[i].train_options.strategy,
                    nlohmann::json::parse(texts[i]).get<MemoryMeasurement>(), zero_formula_bytes(setups[i])});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  write_header(std::cout, options, simgrid_source(options.platform, simgrid_args), rows.front().measurement);
  write_table(std::cout, rows);
  std::cout << fmt::format("\n# {} simulations, one per model and strategy, in {:.2f} s wall time\n",
                           rows.size(), wall);
  const auto json = [&](std::ostream& out) {
    write_json(out, command_json(options, simgrid_args, rows.front().measurement, wall), options, rows);
  };
  write_files(options, sweep, outputs, step_rows(rows), json);
  if (!options.plot_prefix.empty()) write_plots(python, "plot_memory.py", outputs, json);
  outputs.commit();
  if (!options.plot_prefix.empty())
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  return 0;
}

}  // namespace spmdsim::cli::memory
