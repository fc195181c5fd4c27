// collective_algorithms_benchmark: what simulating each registered collective algorithm costs on the machine
// running the simulator, at p = 64 and 1024 devices. Figures and their reading: docs/collectives.md.
//
// Every algorithm of every collective kind in the registry runs one call on Array::abstract inputs (shapes
// and costs only: no values are computed) on topologies::switch_cluster(default_switch_cluster(p)) under
// alpha_beta_config(), through the public collective of its kind with CollectiveOptions{.algorithm = name}.
// The program prints the wall time, CPU time and peak RSS of that simulation, the collective's simulated
// time beside the algorithm's closed form, and the bytes the devices sent.
//
// The message is n = 64 MiB of float32 in each kind's convention of CostInputs (REFERENCES.md §3):
//   all_reduce      psum of a 64 MiB vector per device
//   all_gather      all_gather of 64 MiB / p per device, 64 MiB gathered
//   reduce_scatter  psum_scatter of p blocks of 64 MiB / p per device
//   all_to_all      all_to_all of p blocks of 64 MiB / p per device
//   broadcast       broadcast of a 64 MiB vector from device 0
//   reduce          reduce of a 64 MiB vector to device 0
// The platform's logical shape is {8, p / 8} (8 devices a node); only hierarchical and multidim read it.
//
// Each (kind, algorithm, p) runs in a child process of its own (support/child_runs.hpp) under a wall-time
// limit; a run killed at the limit says so. An algorithm that refuses p says which counts it accepts.
//
//   collective_algorithms_benchmark [--quick] [--repeats N] [--time-limit S]
//     --quick         p = 64 only
//     --repeats N     runs per configuration, the table shows the median (default 1: a run at p = 1024 can
//                     take minutes)
//     --time-limit S  wall seconds a run may take before it is killed (default 600)
//   collective_algorithms_benchmark --one kind,algorithm,p    one run; prints one result line
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "support/child_runs.hpp"
#include "support/process_measurements.hpp"

namespace {

namespace benchmarks = spmdsim::benchmarks;
using spmdsim::CollectiveKind;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kProgram = "collective_algorithms_benchmark";
constexpr std::string_view kResultTag = "collective_algorithms_benchmark-result";
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kMessageBytes = 64 * kMiB;
constexpr int kDevicesPerNode = 8;

// One run: an algorithm of a kind on p devices.
struct Config {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string algorithm;
  int devices = 0;

  std::string argument() const {
    return fmt::format("{},{},{}", spmdsim::collective_kind_name(kind), algorithm, devices);
  }
};

Config parse_config(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  if (parts.size() != 3)
    throw std::invalid_argument(fmt::format("--one expects kind,algorithm,p; got '{}'", text));
  Config config{spmdsim::parse_collective_kind(parts[0]), parts[1], std::stoi(parts[2])};
  spmdsim::check_device_count(config.kind, config.algorithm, config.devices);
  if (config.devices % kDevicesPerNode != 0 || kMessageBytes % (4 * config.devices) != 0)
    throw std::invalid_argument(fmt::format("--one: p must be a multiple of {} dividing {} floats (got {})",
                                            kDevicesPerNode, kMessageBytes / 4, config.devices));
  return config;
}

// The cluster's logical shape: nodes of kDevicesPerNode devices.
std::vector<int> cluster_dimensions(int p) {
  return {kDevicesPerNode, p / kDevicesPerNode};
}

// The switch cluster given that shape: its builder cannot express one, so it is set on the Platform the
// builder returns.
spmdsim::PlatformBuilder shaped_switch_cluster(int p) {
  return [builder = spmdsim::topologies::switch_cluster(spmdsim::topologies::default_switch_cluster(p)), p] {
    spmdsim::Platform platform = builder();
    platform.dimensions = cluster_dimensions(p);
    return platform;
  };
}

// The alpha-beta-gamma inputs of the cluster under alpha_beta_config(): a device-to-device message crosses
// two device links; a float32 sum reads two bytes and writes one per byte reduced (one flop per 4 bytes),
// charged on the device's roofline without a launch, as a collective's reductions are. gamma is taken over
// the whole message, where taking the launch overhead off again loses no digits.
spmdsim::CostInputs cluster_cost_inputs(int p) {
  const auto spec = spmdsim::topologies::default_switch_cluster(p);
  const spmdsim::DeviceSpec& device = spec.device;
  const double n = static_cast<double>(kMessageBytes);
  return {.p = p,
          .n = n,
          .alpha = 2 * spec.device_link.latency,
          .beta = 1 / spec.device_link.bandwidth,
          .gamma = (device.op_time(n / 4, 3 * n, spmdsim::DType::f32) - device.launch_overhead) / n};
}

// ---------------------------------------------------------------------------------------------------------
// The child: one configuration, one result line.

// The JAX-style call of a kind, its name in the report, and the shape of the whole input (axis 0 mapped).
struct Call {
  std::string primitive;
  spmdsim::Shape input_shape;
  std::function<spmdsim::Array(const spmdsim::Array&)> collective;
};

Call call_of(const Config& config) {
  const int p = config.devices;
  const std::int64_t vector = kMessageBytes / 4;  // float32 elements of n
  const std::int64_t block = vector / p;
  const spmdsim::CollectiveOptions options{.algorithm = config.algorithm};
  switch (config.kind) {
    case CollectiveKind::all_reduce:
      return {"psum", {p, vector}, [options](const auto& x) { return spmdsim::psum(x, "i", {}, options); }};
    case CollectiveKind::all_gather:
      return {"all_gather", {p, block}, [options](const auto& x) {
                return spmdsim::all_gather(x, "i", 0, false, {}, options);
              }};
    case CollectiveKind::reduce_scatter:
      return {"psum_scatter", {p, p, block}, [options](const auto& x) {
                return spmdsim::psum_scatter(x, "i", 0, false, {}, options);
              }};
    case CollectiveKind::all_to_all:
      return {"all_to_all", {p, p, block}, [options](const auto& x) {
                return spmdsim::all_to_all(x, "i", 0, 0, false, {}, options);
              }};
    case CollectiveKind::broadcast:
      return {"broadcast", {p, vector}, [options](const auto& x) {
                return spmdsim::broadcast(x, "i", 0, options);
              }};
    case CollectiveKind::reduce:
      return {
          "reduce", {p, vector}, [options](const auto& x) { return spmdsim::reduce(x, "i", 0, options); }};
  }
  throw std::logic_error("unreachable collective kind");
}

// argv: {program, arguments after the configuration..., nullptr}; this benchmark takes none.
int child_main(const std::string& argument, const std::vector<char*>& argv) {
  try {
    if (argv.size() > 2)
      throw std::invalid_argument(fmt::format("unexpected argument '{}' after --one", argv[1]));
    const Config config = parse_config(argument);
    const Call call = call_of(config);
    const spmdsim::Array input = spmdsim::Array::abstract(call.input_shape);
    auto collective_over_i =
        spmdsim::pmap([collective = call.collective](
                          const spmdsim::Args& a) -> spmdsim::Tree { return collective(a[0].array()); },
                      {.axis_name = "i", .name = call.primitive});

    const double cpu_start = benchmarks::process_cpu_seconds();
    const auto start = Clock::now();
    spmdsim::Simulation sim(shaped_switch_cluster(config.devices),
                            {.simgrid_config = spmdsim::alpha_beta_config()});
    collective_over_i(sim, {input});
    const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu_s = benchmarks::process_cpu_seconds() - cpu_start;
    const double peak_rss_bytes = benchmarks::peak_rss_bytes();

    // The collective lasts until its last device is done (tree algorithms finish at different times).
    double simulated_s = 0, bytes_sent = 0;
    const auto report = sim.report();  // named: a range-for would not keep a temporary alive
    for (const auto& times : report.calls.back().times) {
      if (auto it = times.communication.find(call.primitive); it != times.communication.end())
        simulated_s = std::max(simulated_s, it->second);
      bytes_sent += static_cast<double>(times.bytes_sent);
    }
    fmt::print("{} wall_s={:.9g} cpu_s={:.9g} peak_rss_bytes={:.0f} simulated_s={:.17g} bytes_sent={:.17g}\n",
               kResultTag, wall_s, cpu_s, peak_rss_bytes, simulated_s, bytes_sent);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{} --one {}: {}\n", kProgram, argument, e.what());
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The parent: runs the children, prints the table.

// What the table needs of a registered algorithm, whatever its kind.
struct Registered {
  CollectiveKind kind;
  std::string_view name;
  bool (*accepts)(int p);
  std::string_view accepted_counts;
  double (*cost)(const spmdsim::CostInputs&);
};

template <class AlgorithmT>
void append(std::vector<Registered>& all, CollectiveKind kind, std::span<const AlgorithmT> table) {
  for (const auto& a : table) all.push_back({kind, a.name, a.accepts, a.accepted_counts, a.cost});
}

std::vector<Registered> registered_algorithms() {
  std::vector<Registered> all;
  append(all, CollectiveKind::all_reduce, spmdsim::all_reduce_algorithms());
  append(all, CollectiveKind::all_gather, spmdsim::all_gather_algorithms());
  append(all, CollectiveKind::reduce_scatter, spmdsim::reduce_scatter_algorithms());
  append(all, CollectiveKind::all_to_all, spmdsim::all_to_all_algorithms());
  append(all, CollectiveKind::broadcast, spmdsim::broadcast_algorithms());
  append(all, CollectiveKind::reduce, spmdsim::reduce_algorithms());
  return all;
}

// The closed form of the algorithm: the registered cost, except for the two algorithms whose registry rows
// price the flat shape {p} (CostInputs has no dimensions) while the run has the cluster's shape.
double algorithm_closed_form(const Registered& algorithm, int p) {
  const spmdsim::CostInputs c = cluster_cost_inputs(p);
  if (algorithm.kind == CollectiveKind::all_reduce && algorithm.name == "hierarchical")
    return spmdsim::collectives::hierarchical_all_reduce_cost(c, cluster_dimensions(p));
  if (algorithm.kind == CollectiveKind::all_reduce && algorithm.name == "multidim")
    return spmdsim::collectives::multidim_all_reduce_cost(c, cluster_dimensions(p), {});
  return algorithm.cost(c);
}

// The closed form of the run: the collective kernel's launch on the cluster's device, then the algorithm.
double closed_form(const Registered& algorithm, int p) {
  return spmdsim::topologies::default_switch_cluster(p).device.launch_overhead +
         algorithm_closed_form(algorithm, p);
}

struct Measurement {
  double wall_s = 0;
  double cpu_s = 0;
  double peak_rss_bytes = 0;
  double simulated_s = 0;
  double bytes_sent = 0;
};

// A row's figures (medians over the runs), or why it has none.
struct Row {
  std::optional<Measurement> m;
  std::string note;  // refused / timed out / failed
  bool failed = false;
  bool simulated_time_varied = false;
};

Row measure(const Config& config, int repeats, double time_limit_s) {
  std::vector<Measurement> runs;
  for (int r = 0; r < repeats; ++r) {
    const benchmarks::ChildRun run =
        benchmarks::run_child({.program = std::string(kProgram),
                               .configuration = config.argument(),
                               .result_tag = std::string(kResultTag),
                               .keys = {"wall_s", "cpu_s", "peak_rss_bytes", "simulated_s", "bytes_sent"},
                               .time_limit_s = time_limit_s});
    switch (run.outcome) {
      case benchmarks::ChildRun::Outcome::timed_out:
        return {std::nullopt, run.failure};
      case benchmarks::ChildRun::Outcome::failed:
        return {std::nullopt, "failed: " + run.failure, true};
      case benchmarks::ChildRun::Outcome::finished: {
        const auto& f = run.fields;
        runs.push_back(
            {f.at("wall_s"), f.at("cpu_s"), f.at("peak_rss_bytes"), f.at("simulated_s"), f.at("bytes_sent")});
      }
    }
  }
  auto med = [&](double Measurement::*field) {
    std::vector<double> values;
    for (const auto& m : runs) values.push_back(m.*field);
    return benchmarks::median(values);
  };
  Row row{Measurement{med(&Measurement::wall_s), med(&Measurement::cpu_s), med(&Measurement::peak_rss_bytes),
                      med(&Measurement::simulated_s), med(&Measurement::bytes_sent)}};
  for (const auto& m : runs) row.simulated_time_varied |= m.simulated_s != runs.front().simulated_s;
  return row;
}

void print_usage() {
  fmt::print(stderr, "usage: {} [--quick] [--repeats N] [--time-limit S]\n", kProgram);
}

int parent_main(const std::vector<std::string>& args) {
  bool quick = false;
  int repeats = 1;
  double time_limit_s = 600;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--quick") {
      quick = true;
    } else if (args[i] == "--repeats" && i + 1 < args.size()) {
      repeats = std::stoi(args[++i]);
      if (repeats < 1) throw std::invalid_argument("--repeats must be at least 1");
    } else if (args[i] == "--time-limit" && i + 1 < args.size()) {
      time_limit_s = std::stod(args[++i]);
      if (!(time_limit_s > 0)) throw std::invalid_argument("--time-limit must be positive");
    } else {
      print_usage();
      throw std::invalid_argument(fmt::format("unknown argument '{}'", args[i]));
    }
  }
  const std::vector<int> device_counts = quick ? std::vector<int>{64} : std::vector<int>{64, 1024};
  const spmdsim::CostInputs c = cluster_cost_inputs(device_counts.front());

  fmt::print(
      "{}: every registered collective algorithm, one call on abstract arrays,\n"
      "switch cluster default_switch_cluster(p) (A100-like, 300 GB/s device links) with dimensions {{{}, p / "
      "{}}},\n"
      "alpha_beta_config() (alpha = {:g} s, beta = 1 / {:g} GB/s, gamma = {:.4g} s per byte reduced).\n"
      "n = {} MiB in each kind's convention: the all-reduce, broadcast and reduce vector; the gathered "
      "size;\n"
      "the p blocks a device reduce-scatters; what a device sends in an all-to-all.\n"
      "Machine: {} CPUs, {}, load average {}.\n"
      "Median of {} run(s), each in its own process, time limit {:g} s per run.\n\n",
      kProgram, kDevicesPerNode, kDevicesPerNode, c.alpha, 1e-9 / c.beta, c.gamma, kMessageBytes / kMiB,
      sysconf(_SC_NPROCESSORS_ONLN), benchmarks::cpu_model(), benchmarks::load_average(), repeats,
      time_limit_s);
  fmt::print("{:>5}  {:<14}  {:<18}  {:>9}  {:>9}  {:>8}  {:>12}  {:>12}  {:>10}  {:>9}\n", "p", "kind",
             "algorithm", "wall s", "cpu s", "RSS MiB", "simulated s", "formula s", "sim/form-1", "sent GiB");
  std::fflush(stdout);

  std::vector<std::string> failures;
  for (int p : device_counts)
    for (const Registered& algorithm : registered_algorithms()) {
      const Config config{algorithm.kind, std::string(algorithm.name), p};
      std::string line = fmt::format("{:>5}  {:<14}  {:<18}  ", p,
                                     spmdsim::collective_kind_name(algorithm.kind), algorithm.name);
      if (!algorithm.accepts(p)) {
        fmt::print("{}refused: runs on {}\n", line, algorithm.accepted_counts);
        continue;
      }
      const Row row = measure(config, repeats, time_limit_s);
      if (row.m) {
        const double formula = closed_form(algorithm, p);
        line += fmt::format("{:>9.3f}  {:>9.3f}  {:>8.1f}  {:>12.6g}  {:>12.6g}  {:>+10.1e}  {:>9.3f}{}",
                            row.m->wall_s, row.m->cpu_s, row.m->peak_rss_bytes / kMiB, row.m->simulated_s,
                            formula, row.m->simulated_s / formula - 1, row.m->bytes_sent / (1 << 30),
                            row.simulated_time_varied ? "  (simulated time varied across runs!)" : "");
      } else {
        line +=
            row.note.substr(0, row.note.find('\n'));  // the reason; a failed child's output comes at the end
        if (row.failed) failures.push_back(fmt::format("{}: {}", config.argument(), row.note));
      }
      fmt::print("{}\n", line);
      std::fflush(stdout);
    }

  fmt::print("\nLoad average at the end: {}\n", benchmarks::load_average());
  if (!failures.empty()) {
    fmt::print(stderr, "\n{}: some configurations failed:\n", kProgram);
    for (const auto& failure : failures) fmt::print(stderr, "  {}\n", failure);
  }
  return failures.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return benchmarks::benchmark_main(argc, argv, kProgram, child_main, parent_main);
}
