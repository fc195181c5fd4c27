#include "collectives_sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <variant>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "command_line.hpp"
#include "config_file.hpp"
#include "platform_options.hpp"
#include "plotting.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;

// ---------------------------------------------------------------------------------------------------------
// What can be swept: collectives and dtypes (platform_options.cpp has the platforms). Adding one is a row
// in its table.

// A collective as nccl-tests measures it. S (the "size" column) is nccl-tests' S: the all-reduce vector,
// the gathered or scattered total, what one rank sends in all for all-to-all.
struct Collective {
  CollectiveKind kind;
  std::string_view name;            // nccl-tests' and the registry's name
  std::string_view jax_name;        // the jax.lax primitive, also its key in the call report
  std::string_view redop;           // as nccl-tests prints it
  std::string_view factor_formula;  // busbw = algbw x factor, REFERENCES.md §2.1 (nccl-tests PERFORMANCE.md)
  double (*bus_factor)(int n);
};

double all_reduce_factor(int n) { return 2.0 * (n - 1) / n; }
double n_minus_one_over_n(int n) { return static_cast<double>(n - 1) / n; }

constexpr Collective kCollectives[] = {
    {CollectiveKind::all_reduce, "all_reduce", "psum", "sum", "2(n-1)/n", &all_reduce_factor},
    {CollectiveKind::all_gather, "all_gather", "all_gather", "none", "(n-1)/n", &n_minus_one_over_n},
    {CollectiveKind::reduce_scatter, "reduce_scatter", "psum_scatter", "sum", "(n-1)/n", &n_minus_one_over_n},
    {CollectiveKind::all_to_all, "all_to_all", "all_to_all", "none", "(n-1)/n", &n_minus_one_over_n},
};

const Collective& find_collective(std::string_view name) {
  for (const auto& c : kCollectives)
    if (c.name == name || c.jax_name == name) return c;
  std::vector<std::string> valid;
  for (const auto& c : kCollectives)
    valid.push_back(c.name == c.jax_name ? std::string(c.name) : fmt::format("{} ({})", c.name, c.jax_name));
  throw UsageError(fmt::format("unknown collective '{}' in --collectives; valid: {}", name, fmt::join(valid, ", ")));
}

constexpr DType kDTypes[] = {DType::f32, DType::bf16, DType::f16, DType::f64, DType::i32};

DType find_dtype(std::string_view name) {
  for (auto d : kDTypes)
    if (dtype_name(d) == name) return d;
  std::vector<std::string_view> valid;
  for (auto d : kDTypes) valid.push_back(dtype_name(d));
  throw UsageError(fmt::format("unknown --dtype '{}'; valid: {}", name, fmt::join(valid, ", ")));
}

// ---------------------------------------------------------------------------------------------------------
// Options.

using ByteCount = std::uint64_t;

struct SweepOptions {
  ByteCount min_bytes = 8;
  ByteCount max_bytes = ByteCount{8} << 30;
  ByteCount step_factor = 2;
  std::vector<const Collective*> collectives;
  std::vector<std::string> algorithm_words;  // as given: names, "all", "auto", "default"
  std::vector<int> devices;
  DType dtype = DType::f32;
  ChosenPlatform platform;  // for the largest device count
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
  std::optional<ByteCount> abstract_above;
  bool check = false;
  bool aggregate = false;                         // SimulationOptions::aggregate_ring_phases
  std::vector<std::string> dimension_algorithms;  // SimulationOptions::dimension_algorithms
};

// "64", "64K", "8M", "8G" (powers of 1024, either case), as nccl-tests reads -b and -e.
ByteCount parse_size(const std::string& text, std::string_view option) {
  const auto bad = [&] {
    return UsageError(fmt::format(
        "bad size '{}' for {}: expected a whole number of bytes with an optional K, M or G suffix (powers of 1024), "
        "e.g. 64K",
        text, option));
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || text.size() > digits + 1) throw bad();
  int shift = 0;
  if (text.size() == digits + 1) {
    switch (text.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: throw bad();
    }
  }
  constexpr ByteCount kLargest = ByteCount{1} << 50;  // 1 PiB: far beyond any device, far from overflow
  if (digits > 16 || std::stoull(text.substr(0, digits)) > (kLargest >> shift))
    throw UsageError(fmt::format("size '{}' for {} is too large (at most 1048576G)", text, option));
  return std::stoull(text.substr(0, digits)) << shift;
}

// 1024 -> "1 KiB", 1536 -> "1536 B": exact, as sizes are given.
std::string size_text(ByteCount bytes) {
  constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

// The algorithms to run for one collective: the registered names among `words`, every registered one
// plus auto for "all", the kind's default for "default".
std::vector<std::string> algorithms_for(const Collective& c, const std::vector<std::string>& words) {
  const auto registered = algorithm_names(c.kind);
  std::vector<std::string> chosen;
  const auto add = [&](std::string_view name) {
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.emplace_back(name);
  };
  for (const auto& word : words) {
    if (word == "all") {
      for (auto name : registered) add(name);
      add("auto");
    } else if (word == "default") {
      add(default_algorithm(c.kind));
    } else if (word == "auto" || std::find(registered.begin(), registered.end(), word) != registered.end()) {
      add(word);
    }
  }
  return chosen;
}

std::string valid_algorithms_text(const std::vector<const Collective*>& collectives) {
  std::vector<std::string> per_kind;
  for (const auto* c : collectives)
    per_kind.push_back(fmt::format("{}: {}, auto", c->name, fmt::join(algorithm_names(c->kind), ", ")));
  return fmt::format("{} (or all, default)", fmt::join(per_kind, "; "));
}

// Every name must be registered for at least one chosen collective, and every collective must get one.
void check_algorithm_words(const SweepOptions& options) {
  for (const auto& word : options.algorithm_words) {
    const bool known = word == "all" || word == "default" || word == "auto" ||
                       std::any_of(options.collectives.begin(), options.collectives.end(), [&](const auto* c) {
                         const auto names = algorithm_names(c->kind);
                         return std::find(names.begin(), names.end(), word) != names.end();
                       });
    if (!known)
      throw UsageError(fmt::format("unknown algorithm '{}' in --algorithms; valid: {}", word,
                                   valid_algorithms_text(options.collectives)));
  }
  for (const auto* c : options.collectives)
    if (algorithms_for(*c, options.algorithm_words).empty())
      throw UsageError(fmt::format("no algorithm in --algorithms {} is registered for {}; valid: {}",
                                   fmt::join(options.algorithm_words, ","), c->name,
                                   valid_algorithms_text({c})));
}

std::optional<SweepOptions> parse(const std::vector<std::string>& args) {
  std::string min_bytes, max_bytes, step_factor, collectives, algorithms, devices, dtype, abstract_above,
      dimension_algorithms;
  PlatformRequest platform;
  SweepOptions options;
  po::options_description described("spmdsim collectives options");
  described.add_options()("help,h", "show this help")(
      "minbytes,b", po::value(&min_bytes)->default_value("8"), "smallest message size S (K, M, G: powers of 1024)")(
      "maxbytes,e", po::value(&max_bytes)->default_value("8G"), "largest message size S")(
      "stepfactor,f", po::value(&step_factor)->default_value("2"), "multiply the size by this at each step (>= 2)")(
      "collectives", po::value(&collectives)->default_value("all_reduce,all_gather,reduce_scatter,all_to_all"),
      "collectives to sweep; JAX names (psum, all_gather, psum_scatter, all_to_all) are accepted too")(
      "algorithms", po::value(&algorithms)->default_value("default"),
      "algorithms per collective, from those registered for it, plus auto (the lowest predicted time per call); "
      "'all' = every registered one plus auto, 'default' = the collective's default")(
      "devices", po::value(&devices)->default_value("8,64"),
      "device counts p to run each collective on (2 to 1024), each on the first p devices of the platform")(
      "dtype", po::value(&dtype)->default_value("float32"), "element type: float32, bfloat16, float16, float64, int32");
  add_platform_options(described, platform);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path), "also write the sweep as JSON to this file")(
      "plot", po::value(&options.plot_prefix),
      "also plot time and busbw against size to PREFIX.png and PREFIX.svg (python3 with matplotlib)")(
      "abstract-above", po::value(&abstract_above),
      "run sizes above this many bytes on shapes only (default: what real data would fit in MemAvailable)")(
      "check", po::bool_switch(&options.check),
      "compare each real-data result with a float64 reduction in fixed order and report the largest error")(
      "aggregate", po::bool_switch(&options.aggregate),
      "simulate each ring phase as one transfer each way (abstract rows; real rows' ring all_reduce too, its "
      "values unchanged), exact under the alpha-beta model when p divides the count; docs/performance.md)")(
      "dimension-algorithms", po::value(&dimension_algorithms),
      "what multidim runs along each dimension of the platform, comma-separated: ring, direct, "
      "halving_doubling (default: ring along every one)");
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout << "usage: spmdsim collectives [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
              << "An nccl-tests-style sweep: every collective, algorithm and device count over message sizes\n"
              << "minbytes, minbytes x stepfactor, ... up to maxbytes, on one simulated platform.\n\n"
              << described << "\n";
    return std::nullopt;
  }

  options.min_bytes = values.attributed({"minbytes"}, [&] { return parse_size(min_bytes, "--minbytes"); });
  options.max_bytes = values.attributed({"maxbytes"}, [&] { return parse_size(max_bytes, "--maxbytes"); });
  values.attributed({"minbytes", "maxbytes"}, [&] {
    if (options.min_bytes < 1) throw UsageError("--minbytes must be at least 1");
    if (options.min_bytes > options.max_bytes)
      throw UsageError(fmt::format("--minbytes {} is larger than --maxbytes {}", min_bytes, max_bytes));
  });
  values.attributed({"stepfactor"}, [&] {
    if (step_factor.empty() || step_factor.size() > 9 ||
        step_factor.find_first_not_of("0123456789") != std::string::npos || std::stoull(step_factor) < 2)
      throw UsageError(fmt::format("--stepfactor must be a whole number of at least 2 (got '{}')", step_factor));
    options.step_factor = std::stoull(step_factor);
  });

  values.attributed({"collectives"}, [&] {
    for (const auto& name : split_list(collectives)) {
      const auto* c = &find_collective(name);
      if (std::find(options.collectives.begin(), options.collectives.end(), c) == options.collectives.end())
        options.collectives.push_back(c);
    }
    if (options.collectives.empty()) throw UsageError("--collectives names no collective");
  });
  values.attributed({"algorithms", "collectives"}, [&] {
    options.algorithm_words = split_list(algorithms);
    if (options.algorithm_words.empty()) throw UsageError("--algorithms names no algorithm");
    check_algorithm_words(options);
  });

  values.attributed({"devices"}, [&] {
    for (const auto& item : split_list(devices)) {
      int p = 0;
      if (item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos ||
          (p = std::stoi(item)) < 2 || p > kMaxDevices)
        throw UsageError(fmt::format("--devices: '{}' is not a device count from 2 to {}", item, kMaxDevices));
      if (std::find(options.devices.begin(), options.devices.end(), p) == options.devices.end())
        options.devices.push_back(p);
    }
    if (options.devices.empty()) throw UsageError("--devices names no device count");
  });

  options.dtype = values.attributed({"dtype"}, [&] { return find_dtype(dtype); });
  const int largest = *std::max_element(options.devices.begin(), options.devices.end());
  options.platform = values.attributed({"topology", "preset", "nodes", "platform", "devices"},
                                       [&] { return choose_platform(platform, largest); });
  values.attributed({"dimension-algorithms", "devices", "topology", "preset", "nodes", "platform"}, [&] {
    if (!values.map().count("dimension-algorithms")) return;
    options.dimension_algorithms = split_list(dimension_algorithms);
    if (options.devices.size() != 1 || options.devices[0] != largest)
      throw UsageError("--dimension-algorithms follow the platform's shape, so --devices must be one count, the "
                       "whole platform");
  });
  values.attributed({"abstract-above"}, [&] {
    if (values.map().count("abstract-above")) options.abstract_above = parse_size(abstract_above, "--abstract-above");
  });
  return options;
}

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
      throw UsageError(fmt::format("--dtype {}: {} reduces in it, but the {} devices have no peak FLOP/s for it; "
                                   "valid: {}",
                                   dtype_name(options.dtype), (*reduction)->name, spec.model, fmt::join(valid, ", ")));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The plan: which rows to run, with their shapes.

// One row of the table before it runs.
struct PlannedRow {
  const Collective* collective;
  int p;
  std::string algorithm;
  ByteCount bytes;        // S, rounded down so that every rank's share is whole elements (as nccl-tests does)
  std::int64_t count;     // the count nccl-tests prints: elements per rank in the call's count parameter
  std::int64_t elements_in;   // per device, what the device holds before the call
  bool abstract;
};

// The count for a nominal size: the all-reduce vector's elements, each rank's share otherwise.
std::int64_t count_for(const Collective& c, ByteCount nominal, int p, DType dtype) {
  const auto elements = static_cast<std::int64_t>(nominal / itemsize(dtype));
  return c.kind == CollectiveKind::all_reduce ? elements : elements / p;
}

std::int64_t elements_in_for(const Collective& c, std::int64_t count, int p) {
  switch (c.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather: return count;
    default: return count * p;  // reduce_scatter and all_to_all: every device holds S
  }
}

ByteCount bytes_for(const Collective& c, std::int64_t count, int p, DType dtype) {
  const auto elements = c.kind == CollectiveKind::all_reduce ? count : count * p;
  return static_cast<ByteCount>(elements) * itemsize(dtype);
}

struct Plan {
  std::vector<PlannedRow> rows;
  std::map<const Collective*, std::vector<std::string>> notes;  // rows left out, and why
};

Plan make_plan(const SweepOptions& options, ByteCount abstract_above) {
  Plan plan;
  std::vector<ByteCount> sizes;
  for (ByteCount s = options.min_bytes; s <= options.max_bytes; s *= options.step_factor) {
    sizes.push_back(s);
    if (s > std::numeric_limits<ByteCount>::max() / options.step_factor) break;
  }
  for (const auto* c : options.collectives) {
    const auto algorithms = algorithms_for(*c, options.algorithm_words);
    for (int p : options.devices) {
      std::vector<std::string> runnable;
      for (const auto& a : algorithms) {
        try {
          if (a != "auto") check_device_count(c->kind, a, p);
          runnable.push_back(a);
        } catch (const ValueError& e) {
          plan.notes[c].push_back(fmt::format("skipped: {}", e.what()));
        }
      }
      std::vector<std::string> too_small;
      for (ByteCount nominal : sizes) {
        const auto count = count_for(*c, nominal, p, options.dtype);
        if (count == 0) {
          too_small.push_back(size_text(nominal));
          continue;
        }
        const auto bytes = bytes_for(*c, count, p, options.dtype);
        for (const auto& a : runnable)
          plan.rows.push_back({c, p, a, bytes, count, elements_in_for(*c, count, p), bytes > abstract_above});
      }
      if (!too_small.empty())
        plan.notes[c].push_back(fmt::format("skipped at p={}: {} (less than one {} element per rank)", p,
                                            fmt::join(too_small, ", "), dtype_name(options.dtype)));
    }
  }
  return plan;
}

// The largest size whose real data fits in half of MemAvailable: a row holds about kRealCopies copies of
// p x S bytes at once (host input, device inputs, device outputs, outputs read back, algorithm scratch).
constexpr double kRealCopies = 6;

struct AbstractThreshold {
  ByteCount bytes;
  std::string source;
};

AbstractThreshold default_abstract_threshold(int max_devices) {
  std::ifstream meminfo("/proc/meminfo");
  std::optional<double> available;
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") available = kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  const double budget = available.value_or(4.0 * (1ull << 30)) / 2 / (kRealCopies * max_devices);
  const ByteCount bytes = budget >= 1 ? std::bit_floor(static_cast<ByteCount>(budget)) : 0;
  return {bytes, available ? fmt::format("from MemAvailable {:.1f} GiB", *available / (1ull << 30))
                           : std::string("MemAvailable unreadable: 4 GiB assumed")};
}

// ---------------------------------------------------------------------------------------------------------
// Running a row.

constexpr unsigned kSeed = 1;

template <class T>
double to_double(T x) {
  if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(x);
  else return static_cast<double>(static_cast<float>(x));  // Eigen::half, Eigen::bfloat16
}

// Uniform values, the same for a row's collective, device count and size whatever else the sweep runs:
// floats in [-1, 1), integers in [-100, 100].
Array random_input(const PlannedRow& row, DType dtype) {
  Shape shape{row.p, row.elements_in};
  std::seed_seq seed{kSeed, static_cast<unsigned>(row.collective->kind), static_cast<unsigned>(row.p),
                     static_cast<unsigned>(row.bytes), static_cast<unsigned>(row.bytes >> 32)};
  std::mt19937_64 generator(seed);
  Storage storage = make_storage(dtype, num_elements(shape));
  std::visit(
      [&](auto& values) {
        using T = typename std::decay_t<decltype(values)>::Scalar;
        if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, bool>) {
          std::uniform_int_distribution<int> uniform(-100, 100);
          for (Eigen::Index i = 0; i < values.size(); ++i) values[i] = static_cast<T>(uniform(generator));
        } else {
          std::uniform_real_distribution<double> uniform(-1.0, 1.0);
          for (Eigen::Index i = 0; i < values.size(); ++i) {
            if constexpr (std::is_arithmetic_v<T>) values[i] = static_cast<T>(uniform(generator));
            else values[i] = static_cast<T>(static_cast<float>(uniform(generator)));
          }
        }
      },
      storage);
  return Array(std::move(shape), std::move(storage));
}

// The largest |result - reference| over every device and element. `in` is (p, elements_in) and `out`
// (p, elements_out) as pmap stacks them; the reference sums in float64 over devices 0, 1, ..., p-1.
template <class T>
double max_error_of(CollectiveKind kind, int p, std::int64_t count, const Eigen::Map<const Vector<T>>& in,
                    const Eigen::Map<const Vector<T>>& out) {
  const auto P = static_cast<std::int64_t>(p);
  double error = 0;
  const auto compare = [&](T got, double expected) { error = std::max(error, std::abs(to_double(got) - expected)); };
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter: {
      // The sum of every device's input, then each device's share of it.
      const std::int64_t width = kind == CollectiveKind::all_reduce ? count : count * P;
      std::vector<double> sum(static_cast<std::size_t>(width), 0.0);
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t k = 0; k < width; ++k) sum[static_cast<std::size_t>(k)] += to_double(in[d * width + k]);
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t k = 0; k < count; ++k) {
          const std::int64_t at = kind == CollectiveKind::all_reduce ? k : d * count + k;
          compare(out[d * count + k], sum[static_cast<std::size_t>(at)]);
        }
      break;
    }
    case CollectiveKind::all_gather:
      // Every device holds every device's piece in rank order: the inputs, flattened.
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t j = 0; j < P * count; ++j) compare(out[d * P * count + j], to_double(in[j]));
      break;
    case CollectiveKind::all_to_all:
      // Device d's block j is device j's block d.
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t j = 0; j < P; ++j)
          for (std::int64_t k = 0; k < count; ++k)
            compare(out[d * P * count + j * count + k], to_double(in[j * P * count + d * count + k]));
      break;
    default: throw std::logic_error("no reference for this collective");
  }
  return error;
}

double max_error(const PlannedRow& row, const Array& in, const Array& out) {
  return in.visit_values([&](const auto& in_values) {
    using T = typename std::decay_t<decltype(in_values)>::Scalar;
    return max_error_of(row.collective->kind, row.p, row.count, in_values, out.values<T>());
  });
}

// The collective of `row` on each device, on the axis "i".
Array call_collective(const PlannedRow& row, const Array& x) {
  const CollectiveOptions options{.algorithm = row.algorithm};
  switch (row.collective->kind) {
    case CollectiveKind::all_reduce: return psum(x, "i", {}, options);
    case CollectiveKind::all_gather: return all_gather(x, "i", 0, true, {}, options);
    case CollectiveKind::reduce_scatter: return psum_scatter(x, "i", 0, true, {}, options);
    case CollectiveKind::all_to_all: return all_to_all(x, "i", 0, 0, true, {}, options);
    default: throw std::logic_error("the sweep does not run this collective");
  }
}

struct RowResult {
  PlannedRow row;
  Seconds time = 0;  // the collective on its slowest device
  double algbw = 0;  // GB/s (1e9 bytes per second, as nccl-tests)
  double busbw = 0;
  double bus_factor = 0;
  std::optional<double> max_error;  // with --check, on real data
};

RowResult run_row(Simulation& sim, const PlannedRow& row, const Array& input, bool check) {
  auto fn = pmap([&row](const Args& a) -> Tree { return call_collective(row, a[0].array()); },
                 {.in_axes = Axes(0), .axis_name = "i", .name = fmt::format("{} {}", row.collective->name, row.algorithm)});
  Tree output = fn(sim, {input});
  const auto report = sim.report();
  const CallReport& call = report.calls.back();
  RowResult result{.row = row};
  for (const auto& times : call.times) {
    auto it = times.communication.find(std::string(row.collective->jax_name));
    if (it != times.communication.end()) result.time = std::max(result.time, it->second);
  }
  result.bus_factor = row.collective->bus_factor(row.p);
  result.algbw = result.time > 0 ? static_cast<double>(row.bytes) / result.time / 1e9 : 0;
  result.busbw = result.algbw * result.bus_factor;
  if (check && !row.abstract) result.max_error = max_error(row, input, sim.device_get(output).leaf());
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// Reporters: the table (streamed as rows finish), CSV, JSON, plots.

struct SweepInfo {
  std::string platform;  // its description
  const ChosenPlatform* chosen;
  std::vector<std::pair<std::string, std::string>> simgrid;  // settings in force
  std::string simgrid_source;                                 // where they come from
  std::vector<std::string> simgrid_args;                      // --cfg / --log as given
  DType dtype;
  ByteCount abstract_above;
  std::string abstract_source;
  bool check;
  std::string sizes;
  std::string devices;
  bool aggregate;
  std::vector<std::string> dimension_algorithms;
};

std::string maxerr_text(const RowResult& r) {
  if (r.row.abstract) return "n/a";
  if (!r.max_error) return "-";
  return *r.max_error == 0 ? "0" : fmt::format("{:.2e}", *r.max_error);
}

std::string_view mode_text(const PlannedRow& row) { return row.abstract ? "abstract" : "real"; }

class TableWriter {
 public:
  TableWriter(std::ostream& out, DType dtype, std::size_t algorithm_width)
      : out_(out), dtype_(dtype), algorithm_width_(algorithm_width) {}

  void header(const SweepInfo& info) {
    std::vector<std::string> settings;
    for (const auto& [key, value] : info.simgrid) settings.push_back(key + ":" + value);
    out_ << "# spmdsim collectives: an nccl-tests-style sweep on simulated devices\n"
         << fmt::format("# platform: {} ({})\n", info.platform, info.chosen->summary)
         << fmt::format("# simgrid:  {} ({})\n", fmt::join(settings, ", "), info.simgrid_source)
         << fmt::format("# sweep:    {}; devices {}; {}; random data (seed {}); rows above {} run abstract ({})\n",
                        info.sizes, info.devices, dtype_name(info.dtype), kSeed, size_text(info.abstract_above),
                        info.abstract_source);
    if (info.aggregate || !info.dimension_algorithms.empty())
      out_ << fmt::format("# options:  {}{}{}\n",
                          info.aggregate
                              ? "ring phases aggregated (--aggregate: abstract rows, and real rows' ring all_reduce)"
                              : "",
                          info.aggregate && !info.dimension_algorithms.empty() ? "; " : "",
                          info.dimension_algorithms.empty()
                              ? ""
                              : fmt::format("multidim runs {} along the dimensions (--dimension-algorithms)",
                                            fmt::join(info.dimension_algorithms, ", ")));
    out_ << "# legend:   size = S in bytes (nccl-tests' S), count = elements per rank in the call, time = the "
            "collective on its slowest device, algbw = S/time, busbw = algbw x factor, maxerr = largest |result - "
            "float64 reference| (--check; - unchecked, n/a abstract), mode = real data or abstract (shapes only)\n";
  }

  void section(const Collective& c) {
    out_ << fmt::format("\n# {} ({}): busbw = algbw x {}\n", c.name, c.jax_name, c.factor_formula)
         << fmt::format("#{:>11}  {:>12}  {:>8}  {:>5}  {:>{}}  {:>4}  {:>10}  {:>11}  {:>11}  {:>8}  {:>8}\n", "size",
                        "count", "type", "redop", "algorithm", algorithm_width_, "p", "time(us)", "algbw(GB/s)",
                        "busbw(GB/s)", "maxerr", "mode");
  }

  void row(const RowResult& r) {
    out_ << fmt::format("{:>12}  {:>12}  {:>8}  {:>5}  {:>{}}  {:>4}  {:>10.2f}  {:>11.2f}  {:>11.2f}  {:>8}  {:>8}\n",
                        r.row.bytes, r.row.count, dtype_name(dtype_),
                        r.row.collective->redop, r.row.algorithm, algorithm_width_, r.row.p, r.time * 1e6, r.algbw,
                        r.busbw, maxerr_text(r), mode_text(r.row));
    out_.flush();
  }

  void note(const std::string& text) { out_ << "# " << text << "\n"; }

 private:
  std::ostream& out_;
  DType dtype_;
  std::size_t algorithm_width_;
};

// Rows done out of the total, with the wall time, redrawn in place on a terminal's stderr.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled)
      : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

  void show(std::size_t done) {
    if (!enabled_) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
    std::cerr << fmt::format("\r[{}{}] {}/{} rows, {:.1f} s", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                             done, total_, elapsed())
              << std::flush;
  }
  // Erases the bar so that a line written to a terminal's stdout is not mixed with it.
  void clear() {
    if (enabled_) std::cerr << "\r\033[K" << std::flush;
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

nlohmann::ordered_json row_json(const RowResult& r, DType dtype) {
  nlohmann::ordered_json j;
  j["collective"] = r.row.collective->name;
  j["jax_name"] = r.row.collective->jax_name;
  j["size_bytes"] = r.row.bytes;
  j["count_elements"] = r.row.count;
  j["type"] = dtype_name(dtype);
  j["redop"] = r.row.collective->redop;
  j["algorithm"] = r.row.algorithm;
  j["devices"] = r.row.p;
  j["time_us"] = r.time * 1e6;
  j["algbw_GB_per_s"] = r.algbw;
  j["busbw_GB_per_s"] = r.busbw;
  j["busbw_factor"] = r.bus_factor;
  j["max_abs_error"] = r.max_error ? nlohmann::ordered_json(*r.max_error) : nlohmann::ordered_json(nullptr);
  j["mode"] = mode_text(r.row);
  return j;
}

void write_json(std::ostream& out, const SweepInfo& info, const std::vector<RowResult>& rows,
                const std::vector<std::string>& notes, double wall_seconds, Seconds simulated) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["command"] = "spmdsim collectives";
  j["platform"] = info.platform;
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
  };
  j["topology"] = text_or_null(info.chosen->topology);
  j["platform_file"] = text_or_null(info.chosen->platform_file);
  j["preset"] = info.chosen->preset;
  j["nodes"] = info.chosen->nodes == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.chosen->nodes);
  j["simgrid_config"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : info.simgrid) j["simgrid_config"][key] = value;
  j["simgrid_source"] = info.simgrid_source;
  j["simgrid_args"] = info.simgrid_args;
  j["dtype"] = dtype_name(info.dtype);
  j["seed"] = kSeed;
  j["abstract_above_bytes"] = info.abstract_above;
  j["abstract_above_source"] = info.abstract_source;
  j["check"] = info.check;
  j["aggregate_ring_phases"] = info.aggregate;
  j["dimension_algorithms"] = info.dimension_algorithms;
  j["wall_time_s"] = wall_seconds;
  j["simulated_time_s"] = simulated;
  j["notes"] = notes;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) j["rows"].push_back(row_json(r, info.dtype));
  out << j.dump(2) << "\n";
}

constexpr const char* kCsvColumns[] = {"collective", "jax_name", "size_bytes", "count_elements", "type", "redop",
                                       "algorithm", "devices", "time_us", "algbw_GB_per_s", "busbw_GB_per_s",
                                       "busbw_factor", "max_abs_error", "mode"};

void write_csv(std::ostream& out, const std::vector<RowResult>& rows, DType dtype) {
  out << fmt::format("{}\n", fmt::join(kCsvColumns, ","));
  for (const auto& r : rows)
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.row.collective->name, r.row.collective->jax_name,
                       r.row.bytes, r.row.count, dtype_name(dtype), r.row.collective->redop, r.row.algorithm, r.row.p,
                       r.time * 1e6, r.algbw, r.busbw, r.bus_factor, r.max_error ? fmt::format("{}", *r.max_error) : "",
                       mode_text(r.row));
}

}  // namespace

int run_collectives_sweep(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const SweepOptions& options = *parsed;
  // Fail before the sweep, not after it.
  const std::string python = options.plot_prefix.empty() ? std::string() : find_plotting_python();

  const int max_devices = *std::max_element(options.devices.begin(), options.devices.end());
  AbstractThreshold threshold = options.abstract_above ? AbstractThreshold{*options.abstract_above, "--abstract-above"}
                                                       : default_abstract_threshold(max_devices);
  const Plan plan = make_plan(options, threshold.bytes);

  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  // SimGrid reports every configuration change at INFO; the header says which settings ran instead. A --log
  // of the user's comes later and wins.
  split.simgrid.insert(split.simgrid.begin() + 1, "--log=xbt_cfg.thres:warning");
  Argv simgrid_argv(split.simgrid);
  Simulation sim(simgrid_argv.argc(), simgrid_argv.argv(), options.platform.builder,
                 {.simgrid_config = settings_not_overridden(options.platform.simgrid_config, simgrid_args),
                  .dimension_algorithms = options.dimension_algorithms,
                  .aggregate_ring_phases = options.aggregate});
  // choose_platform checked the other platforms; a file's devices are known once SimGrid has loaded it.
  if (sim.num_devices() < max_devices)
    throw UsageError(fmt::format("--devices {} is more than the {} devices of --platform {}", max_devices,
                                 sim.num_devices(), options.platform.platform_file));
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
                 .sizes = fmt::format("{} to {}, x{}", size_text(options.min_bytes), size_text(options.max_bytes),
                                      options.step_factor),
                 .devices = fmt::format("{}", fmt::join(options.devices, ", ")),
                 .aggregate = options.aggregate,
                 .dimension_algorithms = options.dimension_algorithms};

  std::size_t algorithm_width = std::string_view("algorithm").size();
  for (const auto& row : plan.rows) algorithm_width = std::max(algorithm_width, row.algorithm.size());
  TableWriter table(std::cout, options.dtype, algorithm_width);
  table.header(info);
  ProgressBar progress(plan.rows.size(), isatty(STDERR_FILENO) && plan.rows.size() > 20);

  std::vector<RowResult> results;
  std::vector<std::string> all_notes;
  const Collective* current = nullptr;
  const auto close_section = [&] {
    if (current == nullptr) return;
    auto it = plan.notes.find(current);
    if (it == plan.notes.end()) return;
    for (const auto& text : it->second) {
      table.note(text);
      all_notes.push_back(fmt::format("{}: {}", current->name, text));
    }
  };
  // One input per collective, device count and size, shared by its algorithms: they see the same data.
  std::optional<Array> input;
  const PlannedRow* input_for = nullptr;
  progress.show(0);
  for (const auto& row : plan.rows) {
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
    results.push_back(run_row(sim, row, *input, options.check));
    progress.clear();
    table.row(results.back());
    progress.show(results.size());
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
  std::cout << fmt::format("\n# {} rows in {:.2f} s wall time; simulated time {:.6f} s\n", results.size(), wall,
                           sim.now());

  if (!options.csv_path.empty())
    write_file_atomically(options.csv_path, [&](std::ostream& out) { write_csv(out, results, options.dtype); });
  const auto json = [&](std::ostream& out) { write_json(out, info, results, all_notes, wall, sim.now()); };
  if (!options.json_path.empty()) write_file_atomically(options.json_path, json);
  if (!options.plot_prefix.empty()) {
    write_plots(python, "plot_collectives.py", options.json_path, options.plot_prefix, json);
    std::cout << fmt::format("# plots: {}.png, {}.svg\n", options.plot_prefix, options.plot_prefix);
  }
  return 0;
}

}  // namespace spmdsim::cli
