#include "commands/train/run.hpp"

#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands/train/options.hpp"
#include "commands/train/output.hpp"
#include "commands/train/training_run.hpp"
#include "common/command_line.hpp"
#include "common/forked_run.hpp"
#include "common/output_files.hpp"
#include "common/plotting.hpp"
#include "common/rows.hpp"

namespace spmdsim::cli::train {

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const TrainCommandOptions& options = *parsed;
  // Fail before the runs, not after them.
  OutputFiles outputs(
      {{"--csv", options.csv_path}, {"--json", options.json_path}, {"--trace", options.trace_path}},
      options.plot_prefix);
  const std::string trace = options.trace_path.empty() ? "" : outputs.staged(options.trace_path).string();
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();

  const auto start = std::chrono::steady_clock::now();
  std::vector<TrainingResult> results;
  for (int p : options.devices) {
    const std::string text = run_in_child(fmt::format("--devices {}", p), [&] {
      const bool traced = p == options.devices.back();
      return nlohmann::json(run_training(options.setup, options.platform, split.simgrid, p,
                                         global_batch(options, p), traced ? trace : ""))
          .dump();
    });
    results.push_back(nlohmann::json::parse(text).get<TrainingResult>());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  const std::string source = simgrid_source(options.platform, simgrid_args);
  const Rows rows = training_rows(results);
  write_table(std::cout, options, source, results.front(), rows);
  std::cout << fmt::format("\n# {} simulations, one per device count, in {:.2f} s wall time\n",
                           rows.cells.size(), wall);

  if (!options.csv_path.empty())
    outputs.write(options.csv_path, [&](std::ostream& out) { write_csv(out, rows); });
  const auto json = [&](std::ostream& out) {
    write_json(out, options, simgrid_args, results.front(), rows, wall);
  };
  if (!options.json_path.empty()) outputs.write(options.json_path, json);
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
