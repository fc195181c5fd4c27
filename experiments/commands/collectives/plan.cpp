#include "commands/collectives/plan.hpp"

#include <bit>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// The largest size whose real data fits in half of MemAvailable: a row holds about kRealCopies copies of
// p x S bytes at once (host input, device inputs, device outputs, outputs read back, algorithm scratch).
constexpr double kRealCopies = 6;

}  // namespace

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

}  // namespace spmdsim::cli::collectives
