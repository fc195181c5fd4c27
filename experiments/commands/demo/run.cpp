#include "commands/demo/run.hpp"

#include <iostream>

#include <fmt/format.h>

#include "commands/demo/examples.hpp"
#include "commands/demo/options.hpp"
#include "commands/demo/summary.hpp"
#include "common/command_line.hpp"
#include "common/host_budget.hpp"
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
  // Each device's program is an actor, and so is each device's part of a device_get; SimGrid frees an
  // ended actor's stack later, so both overlap: at 128 devices the demo needs 1.45 to 1.53 GiB of address
  // space (ulimit -v), about 1.4 stacks of 8 MiB per device over the 0.14 GiB it needs at 2 devices. The
  // data is a few numbers per device.
  check_fits(
      fmt::format("--devices {}", options.devices), "--devices", options.devices, 2,
      [](std::int64_t devices) { return HostDemand{.actors = devices * 3 / 2 + 1}; },
      actor_contexts(split.simgrid), read_host_limits());
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
