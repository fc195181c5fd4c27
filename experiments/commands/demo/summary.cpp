#include "commands/demo/summary.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/rows.hpp"

namespace spmdsim::cli::demo {
namespace {

constexpr int kMicrosecondDecimals = 3;

Cell microseconds(Seconds seconds) {
  return real_cell(seconds * 1e6, kMicrosecondDecimals);
}

// The collectives any device waited in, in the report's (alphabetical) order.
std::vector<std::string> collectives_used(const SimulationReport& report) {
  std::set<std::string> names;
  for (const auto& times : report.device_totals)
    for (const auto& [name, seconds] : times.communication) names.insert(name);
  return {names.begin(), names.end()};
}

// The tags any device held at its peak, in registration order (the reports' order).
std::vector<MemoryTag> tags_used(const SimulationReport& report) {
  std::vector<MemoryTag> tags;
  for (const MemoryTag tag : memory_tags())
    if (std::any_of(report.memory.begin(), report.memory.end(),
                    [tag](const DeviceMemory& m) { return m.at_peak[tag.index()] > 0; }))
      tags.push_back(tag);
  return tags;
}

Rows summary_rows(const SimulationReport& report) {
  const auto collectives = collectives_used(report);
  const auto tags = tags_used(report);
  Rows rows;
  rows.columns.push_back({.key = "device", .header = "device", .left = true});
  rows.columns.push_back({.key = "compute_us", .header = "compute(us)"});
  for (const auto& name : collectives) rows.columns.push_back({.key = name + "_us", .header = name + "(us)"});
  rows.columns.push_back({.key = "transfer_us", .header = "transfer(us)"});
  rows.columns.push_back({.key = "idle_us", .header = "idle(us)"});
  rows.columns.push_back({.key = "peak_bytes", .header = "peak(B)"});
  for (auto tag : tags) {
    const std::string name(memory_tag_name(tag));
    rows.columns.push_back({.key = name + "_bytes", .header = name + "(B)"});
  }
  for (std::size_t d = 0; d < report.device_names.size(); ++d) {
    const DeviceTimes& times = report.device_totals[d];
    const DeviceMemory& memory = report.memory[d];
    std::vector<Cell> row{text_cell(report.device_names[d]), microseconds(times.compute)};
    for (const auto& name : collectives) {
      const auto it = times.communication.find(name);
      row.push_back(microseconds(it == times.communication.end() ? 0.0 : it->second));
    }
    row.push_back(microseconds(times.transfer));
    row.push_back(microseconds(std::max(times.idle, 0.0)));  // busy is subtracted from elapsed: -1e-20 is 0
    row.push_back(real_cell(memory.peak, 0));
    for (auto tag : tags) row.push_back(real_cell(memory.at_peak[tag.index()], 0));
    rows.cells.push_back(std::move(row));
  }
  fit_widths(rows);
  return rows;
}

}  // namespace

void write_summary(std::ostream& out, const SimulationReport& report) {
  std::vector<std::string> algorithms;
  for (const auto& [collective, algorithm] : report.algorithms)
    algorithms.push_back(collective + ": " + algorithm);
  out << fmt::format(
             "# summary:  {} calls on {} devices, {:.{}f} us simulated; --verbose adds the report of "
             "each call\n",
             report.calls.size(), report.device_names.size(), report.simulated_time * 1e6,
             kMicrosecondDecimals)
      << fmt::format("# simgrid:  {}\n",
                     report.config.empty() ? "defaults" : fmt::format("{}", fmt::join(report.config, ", ")))
      << fmt::format("# algorithms: {}\n", fmt::join(algorithms, ", "))
      << "# legend:   per device over the whole run: compute, the time waited in each collective, host <-> "
         "device transfers and idle, in us; peak = the device's memory peak and, by tag, what it held at "
         "that "
         "peak, in bytes\n";
  write_table(out, summary_rows(report));
}

}  // namespace spmdsim::cli::demo
