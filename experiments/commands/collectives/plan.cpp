#include "commands/collectives/plan.hpp"

#include <bit>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli::collectives {
namespace {

// The count for a nominal size: the all-reduce vector's elements, each rank's share otherwise.
std::int64_t count_for(const Collective& c, ByteCount nominal, int p, DType dtype) {
  const auto elements = static_cast<std::int64_t>(nominal / itemsize(dtype));
  return c.kind == CollectiveKind::all_reduce ? elements : elements / p;
}

std::int64_t elements_in_for(const Collective& c, std::int64_t count, int p) {
  switch (c.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather:
      return count;
    default:
      return count * p;  // reduce_scatter and all_to_all: every device holds S
  }
}

ByteCount bytes_for(const Collective& c, std::int64_t count, int p, DType dtype) {
  const auto elements = c.kind == CollectiveKind::all_reduce ? count : count * p;
  return static_cast<ByteCount>(elements) * itemsize(dtype);
}

// A row of real data holds about kRealCopies copies of p x S bytes at once (host input, device inputs, device
// outputs, outputs read back, algorithm scratch).
constexpr double kRealCopies = 6;

// A row runs an actor per device and reads the results back with a device_get actor per device, whose
// stacks overlap as the demo's do (commands/demo/run.cpp); a collective's channels past the first run on
// actors of their own.
std::int64_t sweep_actors(int max_devices, int channels) {
  return std::int64_t{max_devices} * 3 / 2 + 1 + std::int64_t{max_devices} * (channels - 1);
}

}  // namespace

Plan make_plan(const SweepOptions& options, ByteCount abstract_above) {
  Plan plan;
  std::vector<ByteCount> sizes;
  for (ByteCount s = options.min_bytes; s <= options.max_bytes; s *= options.step_factor) {
    sizes.push_back(s);
    if (s > std::numeric_limits<ByteCount>::max() / options.step_factor) break;
  }
  for (const auto* c : options.collectives) {
    const auto algorithms = algorithms_for(*c, options.algorithm_words, collective_library(options.platform));
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

int sweep_channels(const SweepOptions& options) {
  int channels = 1;
  for (const auto* c : options.collectives)
    for (const auto& a : algorithms_for(*c, options.algorithm_words, collective_library(options.platform)))
      if (a != "auto") channels = std::max(channels, collective_channels(options.platform, a));
  return channels;
}

HostDemand sweep_demand(int max_devices, int channels, ByteCount largest_real_row) {
  return {.data_bytes = kRealCopies * max_devices * static_cast<double>(largest_real_row),
          .actors = sweep_actors(max_devices, channels),
          .abstract = largest_real_row == 0};
}

AbstractThreshold default_abstract_threshold(int max_devices, int channels, const ActorContexts& contexts,
                                             HostLimits limits) {
  // Half of MemAvailable (4 GiB assumed when unreadable) leaves room for the rest of the machine; the
  // address space (RLIMIT_AS) and memory maps are the limits as they are.
  const bool readable = limits.mem_available.has_value();
  const double available = limits.mem_available.value_or(4.0 * (1ull << 30));
  limits.mem_available = available / 2;
  const auto log2_bytes = largest_fitting(
      0, 50, [&](std::int64_t log2) { return sweep_demand(max_devices, channels, ByteCount{1} << log2); }, contexts,
      limits);
  const ByteCount bytes = log2_bytes ? ByteCount{1} << *log2_bytes : 0;
  std::string source = readable ? fmt::format("half of MemAvailable {}", gib_text(available))
                                : std::string("MemAvailable unreadable: 4 GiB assumed");
  if (limits.address_space) source += fmt::format(", RLIMIT_AS {}", gib_text(*limits.address_space));
  return {bytes, fmt::format("{}; {} actors' stacks", source, sweep_actors(max_devices, channels))};
}

void check_real_rows_fit(const Plan& plan, int channels, const AbstractThreshold& threshold,
                         const ActorContexts& contexts, const HostLimits& limits) {
  int max_devices = 0;
  ByteCount largest = 0;
  for (const auto& row : plan.rows) {
    max_devices = std::max(max_devices, row.p);
    if (!row.abstract) largest = std::max(largest, row.bytes);
  }
  if (max_devices == 0) return;
  // The actors alone first: no threshold helps a device count whose actors do not fit.
  check_fits(
      fmt::format("--devices {}", max_devices), "--devices", max_devices, 2,
      [channels](std::int64_t p) { return sweep_demand(static_cast<int>(p), channels, 0); }, contexts, limits);
  const auto shortfall = host_shortfall(sweep_demand(max_devices, channels, largest), contexts, limits);
  if (!shortfall) return;
  const auto fitting = default_abstract_threshold(max_devices, channels, contexts, limits);
  throw UsageError(
      fmt::format("{} {}: the real rows up to {} at {} devices do not fit: {}; --abstract-above {} "
                  "fits ({}); rows above it run on shapes only",
                  threshold.source, size_text(threshold.bytes), size_text(largest), max_devices, *shortfall,
                  size_text(fitting.bytes), fitting.source));
}

}  // namespace spmdsim::cli::collectives
