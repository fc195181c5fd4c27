#include "commands/demo/run.hpp"

#include <iostream>

#include <fmt/format.h>

#include "commands/demo/examples.hpp"
#include "commands/demo/options.hpp"
#include "commands/demo/summary.hpp"
#include "common/command_line.hpp"
#include "common/output_files.hpp"
#include "common/simulation_start.hpp"
#include "spmdsim/report_writers.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim::cli::demo {

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const DemoOptions& options = *parsed;
  OutputFiles outputs({{"--json", options.json_path}, {"--trace", options.trace_path}});
  const auto simulation = start_simulation(
      topologies::switch_cluster(topologies::default_switch_cluster(options.devices)), {}, split.simgrid);
  Simulation& sim = *simulation;
  std::cout << fmt::format(
      "spmdsim demo: the pmap tutorials' examples on {} simulated devices\nplatform: {}\n", options.devices,
      sim.platform().description);
  run_examples(sim, options.devices, std::cout);
  const auto report = sim.report();
  std::cout << "\n";
  if (options.verbose) {
    write_report_table(std::cout, report);
    std::cout << "\n";
  }
  write_summary(std::cout, report);
  if (!options.json_path.empty())
    outputs.write(options.json_path, [&](std::ostream& out) { write_report_json(out, report); });
  if (!options.trace_path.empty())
    outputs.write(options.trace_path, [&](std::ostream& out) { write_chrome_trace(out, report); });
  outputs.commit();
  return 0;
}

}  // namespace spmdsim::cli::demo
