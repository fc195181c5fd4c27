// psum_benchmark: what simulating one jax.lax.psum costs on the machine running the simulator.
//
// For psum of n bytes of float32 per device over p devices (p = 8, 64, 512; n = 1 MiB and 64 MiB, that is
// 262144 and 16777216 floats per device), it prints the wall time, CPU time and peak RSS of
//   real           pmap(psum) over random floats: every chunk really moves as a message and is really added
//                  on its device,
//   real-aggr      the same with SimulationOptions::aggregate_ring_phases: each ring phase booked as one
//                  transfer each way, the sum computed once in the ring's order and shared by the devices,
//   abstract       the same call on Array::abstract inputs, per message: shapes and costs only,
//   abstract-aggr  abstract with aggregate_ring_phases,
//   s4u-floor      no spmdsim runtime: a plain S4U program simulating the same call's skeleton on the same
//                  platform (s4u_psum.hpp), the part of abstract-aggr that is SimGrid's,
//   s4u-ring       the same for the per-message ring: a plain S4U ring all-reduce, one message per piece and
//                  step, the part of abstract that is SimGrid's,
//   bare           the arithmetic alone: Eigen sums the p arrays of n bytes into one, the (p - 1) * n / 4
//                  additions the reduction needs, over the same row-major (p, n / 4) layout,
// with the simulated time of the psum, the ratio real / bare and the ratio abstract / s4u-ring. Figures and
// their reading: docs/performance.md.
//
// SimGrid allows one engine per process and peak RSS is per process, so every measurement runs in a child
// (support/child_runs.hpp): this program re-executes itself with --one p,n,mode and reads back one result
// line. Each configuration runs --repeats times (default 3), the modes of one p and n taking turns, and the
// table shows the median. A real or bare
// configuration whose estimated memory exceeds 75% of MemAvailable is skipped and says how much it would
// need.
//
//   psum_benchmark [--quick] [--devices P,...] [--sizes N,...] [--modes MODE,...] [--repeats N]
//   [--cfg=name:value ...]
//     --quick      p = 8 and 64 only
//     --devices    the device counts (default 8,64,512), --sizes the bytes per device (default
//     1048576,67108864),
//                  --modes the modes (default all); e.g. issue 17's per-message comparison:
//                  --devices 512,1024 --sizes 1048576 --modes abstract,s4u-ring
//     --cfg=...    SimGrid settings, handed to every simulation (e.g. --cfg=network/model:CM02)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

#include "s4u_psum.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "support/child_runs.hpp"
#include "support/process_measurements.hpp"

namespace {

namespace benchmarks = spmdsim::benchmarks;
using benchmarks::cpu_model;
using benchmarks::load_average;
using benchmarks::median;
using benchmarks::mem_available_bytes;
using benchmarks::peak_rss_bytes;
using benchmarks::process_cpu_seconds;
using spmdsim::Array;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kResultTag = "psum_benchmark-result";
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::uint64_t kSeed = 20240601;

// Memory a real-mode run holds at its peak, in multiples of the p * n input bytes: the host input (the
// devices' shards are views of it), each device's partial sums and gathered result, the stacked output
// when read. Measured peak RSS / (p * n): 4.1 at p = 64 and 3.8 at p = 512 (n = 1 MiB), 3.1 at p = 8
// (n = 64 MiB); rounded up.
constexpr double kRealBytesPerInputByte = 4.0;
// The same for real-aggr, whose devices share one result: the host input, the stacked output when read.
// Measured peak RSS / (p * n): 2.2 at p = 8 and 2.0 at p = 64 (n = 64 MiB), 2.1 at p = 512 and 2.6 at p = 64
// (n = 1 MiB, where the fixed part weighs more); rounded up.
constexpr double kRealAggregatedBytesPerInputByte = 3.0;
// Beyond the arrays: SimGrid, the platform, actor stacks (abstract p = 512 peaks at ~240 MiB).
constexpr double kBaseBytes = 256.0 * kMiB;
// Share of MemAvailable a configuration may plan to use.
constexpr double kMemoryBudget = 0.75;

enum class Mode { bare, real, real_aggregated, abstract, abstract_aggregated, s4u_floor, s4u_ring };

constexpr Mode kModes[] = {
    Mode::bare,      Mode::real,    Mode::real_aggregated, Mode::abstract, Mode::abstract_aggregated,
    Mode::s4u_floor, Mode::s4u_ring};

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::bare:
      return "bare-eigen";
    case Mode::real:
      return "real";
    case Mode::real_aggregated:
      return "real-aggr";
    case Mode::abstract:
      return "abstract";
    case Mode::abstract_aggregated:
      return "abstract-aggr";
    case Mode::s4u_floor:
      return "s4u-floor";
    case Mode::s4u_ring:
      return "s4u-ring";
  }
  return "?";
}

Mode parse_mode(std::string_view text) {
  for (Mode m : kModes)
    if (text == mode_name(m)) return m;
  throw std::invalid_argument(fmt::format(
      "unknown mode '{}' (bare-eigen, real, real-aggr, abstract, abstract-aggr, s4u-floor, s4u-ring)", text));
}

bool is_real(Mode mode) {
  return mode == Mode::real || mode == Mode::real_aggregated;
}
bool is_aggregated(Mode mode) {
  return mode == Mode::real_aggregated || mode == Mode::abstract_aggregated;
}
// Printed as a multiple of the bare sum's time.
bool is_compared_with_bare(Mode mode) {
  return is_real(mode) || mode == Mode::s4u_floor;
}

struct Config {
  int devices = 0;
  std::int64_t bytes_per_device = 0;  // float32: bytes / 4 elements per device
  Mode mode = Mode::real;

  std::int64_t floats_per_device() const { return bytes_per_device / 4; }
  std::string argument() const { return fmt::format("{},{},{}", devices, bytes_per_device, mode_name(mode)); }
};

Config parse_config(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  if (parts.size() != 3) throw std::invalid_argument(fmt::format("--one expects p,n,mode; got '{}'", text));
  Config config{std::stoi(parts[0]), std::stoll(parts[1]), parse_mode(parts[2])};
  if (config.devices < 1 || config.bytes_per_device < 4 || config.bytes_per_device % 4 != 0)
    throw std::invalid_argument(fmt::format("--one: bad p or n in '{}'", text));
  return config;
}

// One child's figures. Phases: setup = Simulation construction (engine, platform), pmap = the call,
// get = device_get; for bare only wall and cpu are set. cpu is the process's CPU time over the same interval
// as wall: on a shared machine it shows how much of wall was spent waiting for a CPU. read is the host's
// first read of the (p, n / 4) result after wall's interval: pmap keeps the devices' results apart and
// stacks them when the host first reads the values, as JAX assembles a sharded array.
struct Measurement {
  double wall_s = 0;
  double cpu_s = 0;
  double peak_rss_bytes = 0;
  double psum_simulated_s = 0;   // longest psum span over the devices
  double total_simulated_s = 0;  // host->device, psum, device->host
  double setup_s = 0;
  double pmap_s = 0;
  double get_s = 0;
  double read_s = 0;
  double read_cpu_s = 0;
};

// ---------------------------------------------------------------------------------------------------------
// The child: one configuration, one result line.

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Uniform floats in [-1, 1) from splitmix64 (fast enough for 10^9 values; the same in every mode).
void fill_random(float* data, std::int64_t count) {
  std::uint64_t state = kSeed;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    data[i] = static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;
  }
}

// The sum over the p rows of a row-major (p, n) block, in column blocks that stay in L1 so that each input
// float is read once: (p - 1) * n additions.
void sum_rows(const float* rows, int p, std::int64_t n, float* out) {
  constexpr std::int64_t kBlock = 4096;
  Eigen::Map<const Eigen::ArrayXXf> in(rows, n, p);  // column j = row j of the (p, n) array
  Eigen::Map<Eigen::ArrayXf> sum(out, n);
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t len = std::min(kBlock, n - start);
    auto acc = sum.segment(start, len);
    acc = in.col(0).segment(start, len);
    for (int j = 1; j < p; ++j) acc += in.col(j).segment(start, len);
  }
}

Measurement run_bare(const Config& config) {
  const std::int64_t n = config.floats_per_device();
  Eigen::ArrayXf input(n * config.devices);
  fill_random(input.data(), input.size());
  Eigen::ArrayXf sum = Eigen::ArrayXf::Zero(n);  // touched before timing: no page faults in the sum
  Measurement m;
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  sum_rows(input.data(), config.devices, n, sum.data());
  m.wall_s = seconds_since(start);
  m.cpu_s = process_cpu_seconds() - cpu_start;
  m.peak_rss_bytes = peak_rss_bytes();
  // Keep the sum observable so that the compiler cannot drop it.
  if (!std::isfinite(sum.sum())) throw std::runtime_error("bare sum is not finite");
  return m;
}

// Every row of the psum result equals the sum of the input rows (up to float reassociation).
void check_real_result(const Array& input, const Array& result, int p, std::int64_t n) {
  if (result.shape() != spmdsim::Shape{p, n})
    throw std::runtime_error(
        fmt::format("psum result has shape {} (expected ({}, {}))", result.to_string(), p, n));
  const float* in = input.values<float>().data();
  const float* out = result.values<float>().data();
  std::vector<float> expected(static_cast<std::size_t>(n));
  sum_rows(in, p, n, expected.data());
  const double tolerance = 1e-6 * p;
  for (int row = 0; row < p; ++row)
    for (std::int64_t i = 0; i < n; ++i) {
      const double got = out[row * n + i];
      const double want = expected[static_cast<std::size_t>(i)];
      if (std::abs(got - want) > tolerance * (1.0 + std::abs(want)))
        throw std::runtime_error(
            fmt::format("psum result[{}, {}] = {} but the rows sum to {}", row, i, got, want));
    }
}

Measurement run_simulation(const Config& config, std::vector<char*>& simgrid_argv) {
  const int p = config.devices;
  const std::int64_t n = config.floats_per_device();
  const spmdsim::Shape shape{p, n};
  Array input;
  if (is_real(config.mode)) {
    spmdsim::Vector<float> values(p * n);
    fill_random(values.data(), values.size());
    input = Array(shape, spmdsim::Storage(std::move(values)));
  } else {
    input = Array::abstract(shape);
  }
  auto psum_over_i =
      spmdsim::pmap([](const spmdsim::Args& a) -> spmdsim::Tree { return spmdsim::psum(a[0].array(), "i"); },
                    {.axis_name = "i", .name = "psum"});

  Measurement m;
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  int argc = static_cast<int>(simgrid_argv.size()) - 1;
  spmdsim::Simulation sim(&argc, simgrid_argv.data(),
                          spmdsim::topologies::switch_cluster(spmdsim::topologies::default_switch_cluster(p)),
                          {.aggregate_ring_phases = is_aggregated(config.mode)});
  m.setup_s = seconds_since(start);
  const auto call_start = Clock::now();
  spmdsim::Tree out = psum_over_i(sim, {input});
  m.pmap_s = seconds_since(call_start);
  const auto get_start = Clock::now();
  spmdsim::Tree host = sim.device_get(out);
  m.get_s = seconds_since(get_start);
  m.wall_s = seconds_since(start);
  m.cpu_s = process_cpu_seconds() - cpu_start;
  const Array& result = host.leaf();
  if (is_real(config.mode)) {
    const double read_cpu_start = process_cpu_seconds();
    const auto read_start = Clock::now();
    if (result.values<float>().size() != p * n) throw std::runtime_error("psum result has the wrong size");
    m.read_s = seconds_since(read_start);
    m.read_cpu_s = process_cpu_seconds() - read_cpu_start;
  }
  m.peak_rss_bytes = peak_rss_bytes();

  const auto report = sim.report();
  m.total_simulated_s = report.simulated_time;
  for (const auto& call : report.calls)
    if (call.name == "psum")
      for (const auto& times : call.times)
        if (auto it = times.communication.find("psum"); it != times.communication.end())
          m.psum_simulated_s = std::max(m.psum_simulated_s, it->second);
  if (is_real(config.mode)) check_real_result(input, result, p, n);
  return m;
}

Measurement run_plain_s4u(const Config& config, std::vector<char*>& simgrid_argv) {
  Measurement m;
  const double cpu_start = process_cpu_seconds();
  const auto start = Clock::now();
  int argc = static_cast<int>(simgrid_argv.size()) - 1;
  const auto program =
      config.mode == Mode::s4u_ring ? benchmarks::run_s4u_ring : benchmarks::run_s4u_ring_floor;
  const benchmarks::S4uPsumRun run =
      program(config.devices, config.bytes_per_device, &argc, simgrid_argv.data());
  m.wall_s = seconds_since(start);
  m.cpu_s = process_cpu_seconds() - cpu_start;
  m.peak_rss_bytes = peak_rss_bytes();
  m.setup_s = run.setup_s;
  m.pmap_s = run.run_s;  // the actors' whole run: the call and the results' way back
  m.psum_simulated_s = run.psum_simulated_s;
  m.total_simulated_s = run.total_simulated_s;
  return m;
}

Measurement run_child_configuration(const Config& config, std::vector<char*>& simgrid_argv) {
  switch (config.mode) {
    case Mode::bare:
      return run_bare(config);
    case Mode::s4u_floor:
    case Mode::s4u_ring:
      return run_plain_s4u(config, simgrid_argv);
    case Mode::real:
    case Mode::real_aggregated:
    case Mode::abstract:
    case Mode::abstract_aggregated:
      return run_simulation(config, simgrid_argv);
  }
  throw std::logic_error("unknown mode");
}

int child_main(const std::string& argument, std::vector<char*> simgrid_argv) {
  try {
    const Config config = parse_config(argument);
    const Measurement m = run_child_configuration(config, simgrid_argv);
    fmt::print(
        "{} wall_s={:.9g} cpu_s={:.9g} peak_rss_bytes={:.0f} psum_simulated_s={:.9g} "
        "total_simulated_s={:.9g} "
        "setup_s={:.9g} pmap_s={:.9g} get_s={:.9g} read_s={:.9g} read_cpu_s={:.9g}\n",
        kResultTag, m.wall_s, m.cpu_s, m.peak_rss_bytes, m.psum_simulated_s, m.total_simulated_s, m.setup_s,
        m.pmap_s, m.get_s, m.read_s, m.read_cpu_s);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "psum_benchmark --one {}: {}\n", argument, e.what());
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The parent: runs the children, prints the table.

Measurement measurement_of(const benchmarks::ResultFields& fields) {
  return {fields.at("wall_s"),
          fields.at("cpu_s"),
          fields.at("peak_rss_bytes"),
          fields.at("psum_simulated_s"),
          fields.at("total_simulated_s"),
          fields.at("setup_s"),
          fields.at("pmap_s"),
          fields.at("get_s"),
          fields.at("read_s"),
          fields.at("read_cpu_s")};
}

// Runs this program again as `--one <config> <extra...>`.
benchmarks::ChildRun run_child(const Config& config, const std::vector<std::string>& extra) {
  return benchmarks::run_child(
      {.program = "psum_benchmark",
       .configuration = config.argument(),
       .extra = extra,
       .result_tag = std::string(kResultTag),
       .keys = {"wall_s", "cpu_s", "peak_rss_bytes", "psum_simulated_s", "total_simulated_s", "setup_s",
                "pmap_s", "get_s", "read_s", "read_cpu_s"}});
}

// The bytes a configuration needs, or nullopt when it needs no planning (abstract arrays hold no values).
std::optional<double> estimated_bytes(const Config& config) {
  const double input = static_cast<double>(config.devices) * static_cast<double>(config.bytes_per_device);
  switch (config.mode) {
    case Mode::bare:
      return input + static_cast<double>(config.bytes_per_device) + kBaseBytes;
    case Mode::real:
      return kRealBytesPerInputByte * input + kBaseBytes;
    case Mode::real_aggregated:
      return kRealAggregatedBytesPerInputByte * input + kBaseBytes;
    case Mode::abstract:
    case Mode::abstract_aggregated:
    case Mode::s4u_floor:
    case Mode::s4u_ring:
      return std::nullopt;
  }
  return std::nullopt;
}

struct Row {
  Config config;
  enum class State { measured, skipped, failed } state = State::measured;
  std::string note;               // skipped / failed
  std::vector<Measurement> runs;  // in the order they ran, interleaved with the other modes' at this p and n
  Measurement m;                  // medians
  bool simulated_time_varied = false;
};

// A row's verdict before any run: skipped when its estimated memory does not fit.
Row planned(const Config& config) {
  Row row{config};
  if (auto need = estimated_bytes(config)) {
    const double available = mem_available_bytes();
    if (*need > kMemoryBudget * available) {
      row.state = Row::State::skipped;
      row.note = fmt::format("skipped: needs ~{:.1f} GiB (75% of MemAvailable is {:.1f} GiB)",
                             *need / (1 << 30), kMemoryBudget * available / (1 << 30));
    }
  }
  return row;
}

void take_medians(Row& row) {
  auto med = [&](double Measurement::*field) {
    std::vector<double> values;
    for (const auto& m : row.runs) values.push_back(m.*field);
    return median(values);
  };
  row.m = {med(&Measurement::wall_s),
           med(&Measurement::cpu_s),
           med(&Measurement::peak_rss_bytes),
           med(&Measurement::psum_simulated_s),
           med(&Measurement::total_simulated_s),
           med(&Measurement::setup_s),
           med(&Measurement::pmap_s),
           med(&Measurement::get_s),
           med(&Measurement::read_s),
           med(&Measurement::read_cpu_s)};
  for (const auto& m : row.runs)
    row.simulated_time_varied =
        row.simulated_time_varied || m.psum_simulated_s != row.runs.front().psum_simulated_s;
}

// The modes of one p and n, run by run in turn (repeat 1 of every mode, then repeat 2, ...), so that a change
// in the machine's load weighs on all of them alike and their ratios can be taken run by run.
std::vector<Row> measure_side_by_side(int p, std::int64_t n, const std::vector<Mode>& modes, int repeats,
                                      const std::vector<std::string>& extra) {
  std::vector<Row> rows;
  for (Mode mode : modes) rows.push_back(planned({p, n, mode}));
  for (int r = 0; r < repeats; ++r)
    for (Row& row : rows) {
      if (row.state != Row::State::measured) continue;
      benchmarks::ChildRun run = run_child(row.config, extra);
      if (run.outcome != benchmarks::ChildRun::Outcome::finished) {
        row.state = Row::State::failed;
        row.note = "failed: " + run.failure;
        continue;
      }
      row.runs.push_back(measurement_of(run.fields));
    }
  for (Row& row : rows)
    if (row.state == Row::State::measured) take_medians(row);
  return rows;
}

// The median over the runs of a's field divided by b's, run by run (both rows ran side by side).
double median_ratio(const Row& a, const Row& b, double Measurement::*field) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < a.runs.size() && i < b.runs.size(); ++i)
    ratios.push_back(a.runs[i].*field / b.runs[i].*field);
  return median(ratios);
}

std::string size_label(std::int64_t bytes) {
  return bytes % kMiB == 0 ? fmt::format("{} MiB", bytes / kMiB) : fmt::format("{} B", bytes);
}

void print_usage() {
  fmt::print(
      stderr,
      "usage: psum_benchmark [--quick] [--devices P,...] [--sizes N,...] [--modes MODE,...] [--repeats N] "
      "[--cfg=name:value ...]\n");
}

// A comma-separated list of --devices, --sizes or --modes.
template <class T, class Parse>
std::vector<T> parse_list(const std::string& option, const std::string& text, Parse parse) {
  std::vector<T> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(parse(item));
  if (values.empty()) throw std::invalid_argument(fmt::format("{} needs at least one value", option));
  return values;
}

int parent_main(const std::vector<std::string>& args) {
  std::vector<int> device_counts{8, 64, 512};
  std::vector<std::int64_t> sizes{1 * kMiB, 64 * kMiB};
  std::vector<Mode> modes(std::begin(kModes), std::end(kModes));
  int repeats = 3;
  std::vector<std::string> simgrid_args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--quick") {
      device_counts = {8, 64};
    } else if (args[i] == "--devices" && i + 1 < args.size()) {
      device_counts = parse_list<int>("--devices", args[++i], [](const std::string& p) {
        if (std::stoi(p) < 1) throw std::invalid_argument("--devices: every count must be at least 1");
        return std::stoi(p);
      });
    } else if (args[i] == "--sizes" && i + 1 < args.size()) {
      sizes = parse_list<std::int64_t>("--sizes", args[++i], [](const std::string& n) {
        if (std::stoll(n) < 4 || std::stoll(n) % 4 != 0)
          throw std::invalid_argument("--sizes: every size is a positive multiple of 4 bytes");
        return std::stoll(n);
      });
    } else if (args[i] == "--modes" && i + 1 < args.size()) {
      modes = parse_list<Mode>("--modes", args[++i], [](const std::string& m) { return parse_mode(m); });
    } else if (args[i] == "--repeats" && i + 1 < args.size()) {
      repeats = std::stoi(args[++i]);
      if (repeats < 1) throw std::invalid_argument("--repeats must be at least 1");
    } else if (args[i].starts_with("--cfg=") || args[i].starts_with("--log=")) {
      simgrid_args.push_back(args[i]);
    } else {
      print_usage();
      throw std::invalid_argument(fmt::format("unknown argument '{}'", args[i]));
    }
  }
  fmt::print(
      "psum_benchmark: psum of n bytes of float32 per device (n / 4 floats) over p devices,\n"
      "switch cluster with default_switch_cluster(p) (A100-like, NVLink-class fabric), network model {}.\n"
      "Machine: {} CPUs, {}, MemAvailable {:.1f} GiB, load average {}.\n"
      "Median of {} runs, each in its own process, the modes of one p and n taking turns.\n\n",
      simgrid_args.empty() ? "the platform's (CM02 alpha-beta)"
                           : fmt::format("{}", fmt::join(simgrid_args, " ")),
      sysconf(_SC_NPROCESSORS_ONLN), cpu_model(), mem_available_bytes() / (1 << 30), load_average(), repeats);
  fmt::print("{:>4}  {:>7}  {:<13}  {:>10}  {:>10}  {:>12}  {:>12}  {:>12}  {:>14}\n", "p", "n", "mode",
             "wall s", "cpu s", "peak RSS MiB", "sim psum s", "sim total s", "/ bare wall");
  std::fflush(stdout);

  std::vector<Row> rows;
  bool failed = false;
  for (int p : device_counts)
    for (std::int64_t n : sizes) {
      std::optional<Measurement> bare;
      for (Row& row : measure_side_by_side(p, n, modes, repeats, simgrid_args)) {
        const Mode mode = row.config.mode;
        std::string line = fmt::format("{:>4}  {:>7}  {:<13}  ", p, size_label(n), mode_name(mode));
        if (row.state != Row::State::measured) {
          failed = failed || row.state == Row::State::failed;
          line += row.note.substr(0, row.note.find('\n'));  // the reason; the child's output comes at the end
        } else {
          line += fmt::format("{:>10.4f}  {:>10.4f}  {:>12.1f}", row.m.wall_s, row.m.cpu_s,
                              row.m.peak_rss_bytes / kMiB);
          if (mode == Mode::bare) {
            bare = row.m;
          } else {
            line += fmt::format("  {:>12.6g}  {:>12.6g}{}", row.m.psum_simulated_s, row.m.total_simulated_s,
                                row.simulated_time_varied ? " (varied across runs!)" : "");
            if (is_compared_with_bare(mode) && bare)
              line += fmt::format("  {:>14}", fmt::format("{:.1f} (cpu {:.1f})", row.m.wall_s / bare->wall_s,
                                                          row.m.cpu_s / bare->cpu_s));
          }
        }
        fmt::print("{}\n", line);
        std::fflush(stdout);
        rows.push_back(std::move(row));
      }
    }

  fmt::print(
      "\nWhere the simulations' wall time goes (medians, s): setup = Simulation construction "
      "(engine, platform), pmap = the call, get = device_get;\n"
      "after them, outside wall s: read = the host's first read of the result's values (pmap stacks the "
      "devices' results then), wall and cpu\n");
  fmt::print("{:>4}  {:>7}  {:<13}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}\n", "p", "n", "mode", "setup",
             "pmap", "get", "read", "read cpu");
  for (const auto& row : rows)
    if (row.state == Row::State::measured && row.config.mode != Mode::bare)
      fmt::print("{:>4}  {:>7}  {:<13}  {:>10.4f}  {:>10.4f}  {:>10.4f}  {:>10.4f}  {:>10.4f}\n",
                 row.config.devices, size_label(row.config.bytes_per_device), mode_name(row.config.mode),
                 row.m.setup_s, row.m.pmap_s, row.m.get_s, row.m.read_s, row.m.read_cpu_s);

  // The targets.
  fmt::print("\nTargets:\n");
  // The measured row of `mode` at the same p and n as `row`, if any.
  const auto measured_beside = [&rows](const Row& row, Mode mode) -> const Row* {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.config.mode == mode && r.config.devices == row.config.devices &&
             r.config.bytes_per_device == row.config.bytes_per_device && r.state == Row::State::measured;
    });
    return it == rows.end() ? nullptr : &*it;
  };
  for (const auto& row : rows) {
    if (!is_real(row.config.mode) || row.state != Row::State::measured) continue;
    const Row* bare = measured_beside(row, Mode::bare);
    if (bare == nullptr) continue;
    const double ratio = row.m.wall_s / bare->m.wall_s;
    std::string floor;
    if (const Row* s4u = measured_beside(row, Mode::s4u_floor);
        s4u && row.config.mode == Mode::real_aggregated)
      floor = fmt::format("; SimGrid alone (s4u-floor) {:.2f}x cpu", s4u->m.cpu_s / bare->m.cpu_s);
    fmt::print(
        "  {} within 2x of bare, p = {}, n = {}: {} ({:.1f}x wall, {:.1f}x cpu; with the first read "
        "of the stacked result {:.1f}x cpu{})\n",
        mode_name(row.config.mode), row.config.devices, size_label(row.config.bytes_per_device),
        ratio <= 2.0 ? "met" : "NOT met", ratio, row.m.cpu_s / bare->m.cpu_s,
        (row.m.cpu_s + row.m.read_cpu_s) / bare->m.cpu_s, floor);
  }
  for (const auto& row : rows)
    if ((row.config.mode == Mode::abstract || row.config.mode == Mode::abstract_aggregated) &&
        row.config.devices == 512 && row.state == Row::State::measured)
      fmt::print("  {} p = 512 under 1 s, n = {}: {} ({:.3f} s wall, {:.3f} s cpu)\n",
                 mode_name(row.config.mode), size_label(row.config.bytes_per_device),
                 row.m.wall_s < 1.0 ? "met" : "NOT met", row.m.wall_s, row.m.cpu_s);
  // Issue 17: the per-message mode near SimGrid's own per-message ring.
  for (const auto& row : rows) {
    if (row.config.mode != Mode::abstract || row.state != Row::State::measured) continue;
    const Row* ring = measured_beside(row, Mode::s4u_ring);
    if (ring == nullptr) continue;
    const double wall = median_ratio(row, *ring, &Measurement::wall_s);
    const double memory = median_ratio(row, *ring, &Measurement::peak_rss_bytes);
    fmt::print(
        "  abstract within 1.2x of s4u-ring's wall and 3x of its peak RSS, p = {}, n = {}: {} ({:.2f}x wall, "
        "{:.2f}x cpu, {:.2f}x peak RSS; simulated psum and total {:.9g} s and {:.9g} s, s4u-ring's {})\n",
        row.config.devices, size_label(row.config.bytes_per_device),
        wall <= 1.2 && memory <= 3.0 ? "met" : "NOT met", wall, median_ratio(row, *ring, &Measurement::cpu_s),
        memory, row.m.psum_simulated_s, row.m.total_simulated_s,
        row.m.psum_simulated_s == ring->m.psum_simulated_s &&
                row.m.total_simulated_s == ring->m.total_simulated_s
            ? "the same"
            : fmt::format("DIFFER ({:.9g} s and {:.9g} s)", ring->m.psum_simulated_s,
                          ring->m.total_simulated_s));
  }

  fmt::print("\nLoad average at the end: {}\n", load_average());
  if (failed) {
    fmt::print(stderr, "\npsum_benchmark: some configurations failed:\n");
    for (const auto& row : rows)
      if (row.state == Row::State::failed)
        fmt::print(stderr, "  p = {}, n = {}, {}: {}\n", row.config.devices,
                   size_label(row.config.bytes_per_device), mode_name(row.config.mode), row.note);
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A child: --one p,n,mode [SimGrid --cfg / --log arguments].
  return spmdsim::benchmarks::benchmark_main(argc, argv, "psum_benchmark", child_main, parent_main);
}
