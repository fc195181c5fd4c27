// train_step_benchmark: what simulating one training step of a 7B transformer on 1024 devices costs on the
// machine running the simulator.
//
// One step of gpt_7b (transformer.hpp; Psi = 6,714,695,680) with mixed-precision Adam (bf16 params and
// gradients, fp32 master weights and moments) under dp and zero3, one sequence of 2048 tokens per device
// (micro-batch 1, no gradient accumulation), in abstract mode with aggregated ring phases
// (docs/performance.md#aggregated-phases), on switch_cluster(default_switch_cluster(p)). It prints the
// simulator's wall time, CPU time and peak RSS, and the simulated step: the call's span and, for the busiest
// device, its compute, communication and host<->device transfer time and its memory peak. The state is made
// on the devices first (TrainStep::init_on_devices), as a training loop's steps find it: sending it from the
// host costs the host actor O((p * leaves)^2) in SimGrid 3.32 (each finished send is removed from the actor's
// list of activities by a linear scan), 10^12 steps at p = 1024.
//
// The device memory is raised from the A100's 80 GiB to 256 GiB so that dp runs at all: its model states
// alone are 16 Psi = 107 GB per device. The peak column shows what each strategy would need.
//
// SimGrid allows one engine per process and peak RSS is per process, so every run is a child
// (support/child_runs.hpp) that re-executes this program with --one strategy,p and prints one result line.
//
//   train_step_benchmark [--devices P] [--repeats N] [--fused-optimizer] [--cfg=name:value ...]
//     --devices P         devices (default 1024)
//     --repeats N         runs per strategy; the table shows the median (default 1)
//     --fused-optimizer   Adam's update as one kernel per parameter (Optimizer::fused)
//     --cfg=...           SimGrid settings, handed to every simulation
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "spmdsim/array.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/transformer.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "support/child_runs.hpp"
#include "support/process_measurements.hpp"

namespace {

namespace benchmarks = spmdsim::benchmarks;
namespace models = spmdsim::models;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kResultTag = "train_step_benchmark-result";
constexpr double kGiB = double(1ull << 30);
constexpr double kDeviceMemoryGiB = 256;  // above dp's 16 Psi + activations; see the header
const std::vector<std::string> kKeys = {"wall_s",         "cpu_s",         "peak_rss_bytes", "setup_s",
                                        "step_s",         "sim_call_s",    "sim_compute_s",  "sim_communication_s",
                                        "sim_transfer_s", "device_peak_bytes"};

struct Config {
  models::Strategy strategy = models::Strategy::dp;
  int devices = 0;
  bool fused_optimizer = false;  // Adam's update as one kernel per parameter (Optimizer::fused)

  std::string argument() const {
    return fmt::format("{},{}{}", models::strategy_name(strategy), devices, fused_optimizer ? ",fused" : "");
  }
};

// strategy,p or strategy,p,fused.
Config parse_config(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos)
    throw std::invalid_argument(fmt::format("--one expects strategy,p[,fused]; got '{}'", text));
  const auto second = text.find(',', comma + 1);
  Config config{models::parse_strategy(text.substr(0, comma)), std::stoi(text.substr(comma + 1, second - comma - 1))};
  if (second != std::string::npos) {
    if (text.substr(second + 1) != "fused")
      throw std::invalid_argument(fmt::format("--one: '{}' after p is not 'fused'", text.substr(second + 1)));
    config.fused_optimizer = true;
  }
  if (config.devices < 1) throw std::invalid_argument(fmt::format("--one: bad p in '{}'", text));
  return config;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ---------------------------------------------------------------------------------------------------------
// The child: one step, one result line.

int child_main(const std::string& argument, std::vector<char*> simgrid_argv) {
  try {
    const Config config = parse_config(argument);
    const int p = config.devices;
    const models::Transformer model(models::gpt_7b());
    const auto adam = models::Optimizer::adam(1e-4);
    const models::TrainStep step(model, config.fused_optimizer ? adam.fused() : adam, p,
                                 {.strategy = config.strategy, .precision = models::Precision::mixed_bf16});
    const spmdsim::Array tokens = spmdsim::Array::abstract({p, 1, model.config().seq_len}, spmdsim::DType::i32);
    auto cluster = spmdsim::topologies::default_switch_cluster(p);
    cluster.device.memory_capacity = kDeviceMemoryGiB * kGiB;

    const double cpu_start = benchmarks::process_cpu_seconds();
    const auto start = Clock::now();
    int argc = static_cast<int>(simgrid_argv.size()) - 1;
    spmdsim::Simulation sim(&argc, simgrid_argv.data(), spmdsim::topologies::switch_cluster(cluster),
                            {.aggregate_ring_phases = true});
    const double setup_s = seconds_since(start);
    const models::TrainState state = step.init_on_devices(sim);  // resident: the step sends only the batch
    const auto step_start = Clock::now();
    step(sim, state, tokens, tokens);
    const double step_s = seconds_since(step_start);
    const double wall_s = seconds_since(start);
    const double cpu_s = benchmarks::process_cpu_seconds() - cpu_start;

    const auto report = sim.report();
    const auto call = std::find_if(report.calls.begin(), report.calls.end(),
                                   [&](const spmdsim::CallReport& c) { return c.name == step.options().name; });
    if (call == report.calls.end()) throw std::runtime_error("the report has no train_step call");
    double compute = 0, communication = 0, transfer = 0, device_peak = 0;
    for (const auto& times : call->times) {  // the step's call, not the init's
      compute = std::max(compute, times.compute);
      communication = std::max(communication, times.communication_total());
      transfer = std::max(transfer, times.transfer);
    }
    for (const auto& memory : call->memory) device_peak = std::max(device_peak, static_cast<double>(memory.peak));
    fmt::print(
        "{} wall_s={:.9g} cpu_s={:.9g} peak_rss_bytes={:.0f} setup_s={:.9g} step_s={:.9g} sim_call_s={:.9g} "
        "sim_compute_s={:.9g} sim_communication_s={:.9g} sim_transfer_s={:.9g} device_peak_bytes={:.0f}\n",
        kResultTag, wall_s, cpu_s, benchmarks::peak_rss_bytes(), setup_s, step_s, call->end - call->start, compute,
        communication, transfer, device_peak);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "train_step_benchmark --one {}: {}\n", argument, e.what());
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The parent: runs the children, prints the table.

int parent_main(const std::vector<std::string>& args) {
  int devices = 1024;
  int repeats = 1;
  bool fused_optimizer = false;
  std::vector<std::string> simgrid_args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--devices" && i + 1 < args.size()) devices = std::stoi(args[++i]);
    else if (args[i] == "--fused-optimizer") fused_optimizer = true;
    else if (args[i] == "--repeats" && i + 1 < args.size()) repeats = std::stoi(args[++i]);
    else if (args[i].starts_with("--cfg=") || args[i].starts_with("--log=")) simgrid_args.push_back(args[i]);
    else
      throw std::invalid_argument(fmt::format(
          "unknown argument '{}' (usage: train_step_benchmark [--devices P] [--repeats N] [--fused-optimizer] "
          "[--cfg=name:value ...])",
          args[i]));
  }
  if (devices < 1 || repeats < 1) throw std::invalid_argument("--devices and --repeats must be at least 1");

  fmt::print(
      "train_step_benchmark: one step of gpt_7b, mixed-precision Adam{}, micro-batch 1 (2048 tokens) per device,\n"
      "abstract arrays, aggregated ring phases, switch_cluster(default_switch_cluster({})) with {:.0f} GiB per "
      "device, network model {}.\n"
      "Machine: {} CPUs, {}, MemAvailable {:.1f} GiB, load average {}. Median of {} run(s), each in its own "
      "process.\n\n",
      fused_optimizer ? " (fused: one kernel per parameter)" : "", devices, kDeviceMemoryGiB, simgrid_args.empty() ? "the platform's (CM02 alpha-beta)" : fmt::format("{}", fmt::join(simgrid_args, " ")),
      sysconf(_SC_NPROCESSORS_ONLN), benchmarks::cpu_model(), benchmarks::mem_available_bytes() / kGiB,
      benchmarks::load_average(), repeats);
  fmt::print("{:<8} {:>8} {:>8} {:>9} {:>8} {:>8} | {:>10} {:>10} {:>10} {:>10} {:>14}\n", "strategy", "wall s",
             "cpu s", "RSS MiB", "setup s", "step s", "sim step s", "compute s", "comm s", "transfer s",
             "dev peak GiB");
  std::fflush(stdout);

  bool failed = false;
  for (models::Strategy strategy : {models::Strategy::dp, models::Strategy::zero3}) {
    const Config config{strategy, devices, fused_optimizer};
    std::vector<benchmarks::ResultFields> runs;
    for (int r = 0; r < repeats && !failed; ++r) {
      benchmarks::ChildRun run = benchmarks::run_child({.program = "train_step_benchmark",
                                                         .configuration = config.argument(),
                                                         .extra = simgrid_args,
                                                         .result_tag = std::string(kResultTag),
                                                         .keys = kKeys});
      if (run.outcome != benchmarks::ChildRun::Outcome::finished) {
        fmt::print("{:<8} failed: {}\n", models::strategy_name(strategy), run.failure);
        failed = true;
      } else {
        runs.push_back(std::move(run.fields));
      }
    }
    if (failed) break;
    auto med = [&](const std::string& key) {
      std::vector<double> values;
      for (const auto& fields : runs) values.push_back(fields.at(key));
      return benchmarks::median(values);
    };
    fmt::print("{:<8} {:>8.2f} {:>8.2f} {:>9.1f} {:>8.3f} {:>8.2f} | {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>14.2f}\n",
               models::strategy_name(strategy), med("wall_s"), med("cpu_s"), med("peak_rss_bytes") / (1 << 20),
               med("setup_s"), med("step_s"), med("sim_call_s"), med("sim_compute_s"), med("sim_communication_s"),
               med("sim_transfer_s"), med("device_peak_bytes") / kGiB);
    std::fflush(stdout);
  }
  fmt::print("\nwall = setup (Simulation construction) + the state's init on the devices + step (the step's call).\n"
             "The simulated columns are the step's, for the busiest device; nothing overlaps, so the call spans its\n"
             "compute, communication and transfers. Load average at the end: {}\n",
             benchmarks::load_average());
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A child: --one strategy,p [SimGrid --cfg / --log arguments].
  return spmdsim::benchmarks::benchmark_main(argc, argv, "train_step_benchmark", child_main, parent_main);
}
