#include "commands/train/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands/train/options.hpp"
#include "commands/train/output.hpp"
#include "commands/train/training_run.hpp"
#include "common/command_line.hpp"
#include "common/forked_run.hpp"
#include "common/output_files.hpp"
#include "common/plotting.hpp"
#include "common/progress_bar.hpp"
#include "common/rows.hpp"
#include "common/shard.hpp"
#include "common/shard_files.hpp"
#include "common/training_options.hpp"

namespace spmdsim::cli::train {
namespace {

// The batches of --batch that every device count can share: the options check them the same way.
std::int64_t batch_step(const TrainCommandOptions& options) {
  std::int64_t step = options.setup.train_options.micro_batches;
  if (options.scaling == Scaling::weak) return step * options.devices.front();
  for (int p : options.devices)
    step = std::lcm(step, std::int64_t{p} * options.setup.train_options.micro_batches);
  return step;
}

// Refuses a device count whose run would not fit in the host's memory: naming the --devices that would when
// no batch helps (the actors, and nccl's channel rings, grow with the devices alone), else the --batch.
void check_host_memory(const TrainCommandOptions& options, int channels, const ActorContexts& contexts,
                       const HostLimits& limits) {
  const int largest = *std::max_element(options.devices.begin(), options.devices.end());
  check_fits(fmt::format("--devices {}", largest), "--devices", largest, 1,
             [&](std::int64_t p) {
               return training_host_demand(options.setup, static_cast<int>(p), 1, channels);
             },
             contexts, limits);
  for (int p : options.devices) {
    const auto demand = [&](std::int64_t batch) {
      TrainCommandOptions with = options;
      with.batch = batch;
      return training_host_demand(options.setup, p, global_batch(with, p), channels);
    };
    check_fits(fmt::format("--devices {} with --batch {}", p, options.batch), "--batch", options.batch, 1,
               demand, contexts, limits, batch_step(options));
  }
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const TrainCommandOptions& options = *parsed;
  // Fail before the runs, not after them.
  OutputFiles outputs(
      {{"--csv", options.csv_path}, {"--json", options.json_path}, {"--trace", options.trace_path}},
      options.plot_prefix);
  const std::string trace = options.trace_path.empty() ? "" : outputs.staged(options.trace_path).string();
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();
  const HostLimits limits = read_host_limits();
  // Under --aggregate on shapes only (a transformer's setup is abstract once parsed), NCCL's channels are
  // booked on each device's own actor, with nothing held per channel beyond the collective's scratch.
  const bool channels_booked = options.setup.aggregate && options.setup.abstract;
  const int channels = channels_booked ? 1 : collective_channels(options.platform, options.setup.algorithm);
  const ActorContexts contexts = fit_actor_contexts(
      split.simgrid, training_actors(*std::max_element(options.devices.begin(), options.devices.end()), channels),
      limits);
  check_host_memory(options, channels, contexts, limits);

  // The device counts this run trains on: all of them, or --shard's slice, led by the smallest count when
  // the slice lacks it: every row's efficiency is against the smallest count's throughput.
  const std::size_t counts = options.devices.size();
  std::vector<std::size_t> mine(counts);
  std::iota(mine.begin(), mine.end(), std::size_t{0});
  if (options.shard) {
    check_shard_has_rows(*options.shard, counts);
    mine = shard_rows(*options.shard, counts);
  }
  const bool smallest_as_base = mine.front() != 0;
  std::vector<std::size_t> trained = mine;
  if (smallest_as_base) trained.insert(trained.begin(), 0);

  const auto start = std::chrono::steady_clock::now();
  std::vector<ChildRun> runs;
  for (const std::size_t index : trained) {
    const int p = options.devices[index];
    runs.push_back({fmt::format("--devices {}", p), [&, p] {
                      const bool traced = p == options.devices.back();
                      return nlohmann::json(run_training(options.setup, options.platform, split.simgrid, p,
                                                         global_batch(options, p), traced ? trace : ""))
                          .dump();
                    }});
  }
  const int largest = options.devices.back();
  const int parallel = parallel_runs(
      options.jobs, training_host_demand(options.setup, largest, global_batch(options, largest), channels),
      contexts, limits);
  ProgressBar progress(runs.size(), isatty(STDERR_FILENO) && runs.size() > 1, "simulations");
  progress.show(0);
  std::vector<TrainingResult> results;
  for (const auto& text : run_in_children(runs, parallel, [&](std::size_t done) { progress.show(done); }))
    results.push_back(nlohmann::json::parse(text).get<TrainingResult>());
  progress.clear();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  const std::string source = simgrid_source(options.platform, simgrid_args);
  Rows rows = training_rows(results);
  if (smallest_as_base) rows.cells.erase(rows.cells.begin());
  write_table(std::cout, options, source, results.front(), rows);
  if (options.shard)
    std::cout << fmt::format(
        "# shard {}: {} of the sweep's {} device counts{}; spmdsim merge joins the shards' "
        "files\n",
        shard_text(*options.shard), mine.size(), counts,
        smallest_as_base ? " (and the smallest, the efficiency's base)" : "");
  std::cout << fmt::format("\n# {} simulations, one per device count, in {:.2f} s wall time\n",
                           results.size(), wall);

  const auto json = [&](std::ostream& out) {
    write_json(out, options, simgrid_args, results.front(), rows, wall);
  };
  std::optional<ShardTag> tag;
  if (options.shard) {
    std::vector<std::string> labels;
    for (int p : options.devices) labels.push_back(fmt::format("p={} batch={}", p, global_batch(options, p)));
    tag = shard_tag("train", *options.shard, labels, json);
  }
  if (!options.csv_path.empty()) outputs.write(options.csv_path, csv_writer(tag, rows));
  if (!options.json_path.empty()) outputs.write(options.json_path, json_writer(tag, json));
  if (!options.plot_prefix.empty()) write_plots(python, "plot_train.py", outputs, json);
  outputs.commit();
  if (!options.plot_prefix.empty())
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  if (!options.trace_path.empty())
    std::cout << fmt::format("# trace of the {}-device run: {}\n", options.devices.back(),
                             options.trace_path);
  return 0;
}

}  // namespace spmdsim::cli::train
