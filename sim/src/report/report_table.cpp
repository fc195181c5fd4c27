// The human-readable report: a header, then per call where each device's time went and how much memory it
// held, then the whole-simulation totals. Tables of many devices are cut to a head, a tail and min/mean/max
// rows, so a 4096-device run reads as easily as a 4-device one.
#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/units_format.hpp"
#include "spmdsim/report_writers.hpp"

namespace spmdsim {
namespace {

using detail::format_bytes;
using detail::format_duration;
using detail::format_percent;

// Up to this many devices every row is printed; past it, the first kHeadRows and the last kTailRows.
constexpr std::size_t kMaxFullRows = 16;
constexpr std::size_t kHeadRows = 4;
constexpr std::size_t kTailRows = 2;

// One column of a per-device table: a value per device and how to print one.
struct Column {
  std::string header;
  std::vector<double> values;
  std::function<std::string(double)> format;
};

// An empty row stands for a rule under the header or above the summary rows.
using TextRow = std::vector<std::string>;

// Aligned text: the device column left-aligned, the numbers right-aligned.
void print_rows(std::ostream& out, const std::vector<TextRow>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  const std::size_t total =
      std::accumulate(widths.begin(), widths.end(), std::size_t{0}) + 3 * (widths.size() - 1);
  for (const auto& row : rows) {
    if (row.empty()) {
      out << "  " << std::string(total, '-') << '\n';
      continue;
    }
    std::string line = "  " + fmt::format("{:<{}}", row[0], widths[0]);
    for (std::size_t c = 1; c < row.size(); ++c) line += fmt::format("   {:>{}}", row[c], widths[c]);
    out << line << '\n';
  }
}

TextRow device_row(const std::string& label, const std::vector<Column>& columns, std::size_t device) {
  TextRow row{label};
  for (const auto& column : columns) row.push_back(column.format(column.values[device]));
  return row;
}

TextRow summary_row(const std::string& label, const std::vector<Column>& columns,
                    const std::function<double(const std::vector<double>&)>& statistic) {
  TextRow row{label};
  for (const auto& column : columns) row.push_back(column.format(statistic(column.values)));
  return row;
}

// One row per device; past kMaxFullRows devices, the head, a "..." row, the tail and min/mean/max.
void print_device_table(std::ostream& out, const std::vector<std::string>& devices,
                        const std::vector<Column>& columns) {
  std::vector<TextRow> rows;
  TextRow header{"device"};
  for (const auto& column : columns) header.push_back(column.header);
  rows.push_back(header);
  rows.emplace_back();
  const std::size_t n = devices.size();
  if (n <= kMaxFullRows) {
    for (std::size_t d = 0; d < n; ++d) rows.push_back(device_row(devices[d], columns, d));
    print_rows(out, rows);
    return;
  }
  for (std::size_t d = 0; d < kHeadRows; ++d) rows.push_back(device_row(devices[d], columns, d));
  rows.push_back({fmt::format("... ({} more)", n - kHeadRows - kTailRows)});
  for (std::size_t d = n - kTailRows; d < n; ++d) rows.push_back(device_row(devices[d], columns, d));
  rows.emplace_back();
  rows.push_back(
      summary_row("min", columns, [](const auto& v) { return *std::min_element(v.begin(), v.end()); }));
  rows.push_back(summary_row("mean", columns, [](const auto& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  }));
  rows.push_back(
      summary_row("max", columns, [](const auto& v) { return *std::max_element(v.begin(), v.end()); }));
  print_rows(out, rows);
}

template <typename T, typename Field>
std::vector<double> column_of(const std::vector<T>& items, Field field) {
  std::vector<double> values;
  values.reserve(items.size());
  for (const auto& item : items) values.push_back(field(item));
  return values;
}

// A device that took no part in a collective spent no time in it.
Seconds time_in(const DeviceTimes& times, const std::string& collective) {
  const auto it = times.communication.find(collective);
  return it == times.communication.end() ? 0.0 : it->second;
}

// Where each device's time went, as durations and shares of `interval` (the call, or the whole run).
std::vector<Column> time_columns(const std::vector<DeviceTimes>& times, Seconds interval) {
  auto as_share = [interval](double seconds) {
    const double percent = interval > 0 ? 100 * seconds / interval : 0;
    return fmt::format("{} {:>6}", format_duration(seconds), format_percent(percent));
  };
  std::set<std::string> collectives;
  for (const auto& t : times)
    for (const auto& [name, seconds] : t.communication) collectives.insert(name);

  std::vector<Column> columns;
  columns.push_back({"compute", column_of(times, [](const DeviceTimes& t) { return t.compute; }), as_share});
  columns.push_back({"communication",
                     column_of(times, [](const DeviceTimes& t) { return t.communication_total(); }),
                     as_share});
  for (const auto& name : collectives)
    columns.push_back(
        {name, column_of(times, [&name](const DeviceTimes& t) { return time_in(t, name); }), as_share});
  // Only where a stream ran: hidden communication is what it did while the program went on.
  if (std::any_of(times.begin(), times.end(), [](const DeviceTimes& t) { return !t.stream.empty(); }))
    columns.push_back({"hidden communication",
                       column_of(times, [](const DeviceTimes& t) { return t.hidden_communication(); }),
                       as_share});
  columns.push_back(
      {"host transfer", column_of(times, [](const DeviceTimes& t) { return t.transfer; }), as_share});
  columns.push_back({"idle", column_of(times, [](const DeviceTimes& t) { return t.idle; }), as_share});
  columns.push_back(
      {"bytes sent", column_of(times, [](const DeviceTimes& t) { return t.bytes_sent; }), format_bytes});
  return columns;
}

// Peaks against capacity, and what the buffers held at the peak for the tags any device used.
std::vector<Column> memory_columns(const std::vector<DeviceMemory>& memory) {
  std::vector<Column> columns;
  columns.push_back({"peak", column_of(memory, [](const DeviceMemory& m) { return m.peak; }), format_bytes});
  columns.push_back(
      {"capacity", column_of(memory, [](const DeviceMemory& m) { return m.capacity; }), format_bytes});
  columns.push_back(
      {"of capacity",
       column_of(memory,
                 [](const DeviceMemory& m) { return m.capacity > 0 ? 100 * m.peak / m.capacity : 0; }),
       format_percent});
  for (const MemoryTag tag : memory_tags()) {
    auto values = column_of(memory, [tag](const DeviceMemory& m) { return m.at_peak[tag.index()]; });
    if (std::all_of(values.begin(), values.end(), [](double v) { return v == 0; })) continue;
    columns.push_back({std::string(memory_tag_name(tag)), std::move(values), format_bytes});
  }
  return columns;
}

void print_header(std::ostream& out, const SimulationReport& report) {
  std::vector<std::string> algorithms;
  for (const auto& [collective, algorithm] : report.algorithms)
    algorithms.push_back(collective + ": " + algorithm);
  auto field = [&out](std::string_view name, const std::string& value) {
    out << fmt::format("  {:<16}{}\n", name, value);
  };
  out << "Simulation report\n";
  field("platform", report.platform);
  field("SimGrid", report.config.empty() ? "defaults" : fmt::format("{}", fmt::join(report.config, ", ")));
  field("algorithms", fmt::format("{}", fmt::join(algorithms, ", ")));
  field("simulated time", fmt::format("{} ({} calls on {} devices)", format_duration(report.simulated_time),
                                      report.calls.size(), report.device_names.size()));
  out << "Times: per device, with their share of the call (of the whole run in the totals).\n"
         "Idle: waiting for inputs or for other devices. Bytes sent: to other devices.\n"
         "Memory: each device's peak, and what it held at that peak by kind of buffer.\n";
  const auto& totals = report.device_totals;
  if (std::any_of(totals.begin(), totals.end(), [](const DeviceTimes& t) { return !t.stream.empty(); }))
    out << "Communication: exposed, the program waiting; hidden communication: asynchronous collectives that\n"
           "ran on the communication stream while the program went on.\n";
}

void print_call(std::ostream& out, const SimulationReport& report, std::size_t index) {
  const CallReport& call = report.calls[index];
  std::vector<std::string> devices;
  for (int d : call.devices) devices.push_back(report.device_names.at(static_cast<std::size_t>(d)));
  out << fmt::format("\nCall {} of {}: {}, start {}, duration {}, {} devices\n", index + 1,
                     report.calls.size(), call.name, format_duration(call.start),
                     format_duration(call.end - call.start), call.devices.size());
  print_device_table(out, devices, time_columns(call.times, call.end - call.start));
  // Host reads (device_get) allocate nothing, so they carry no memory.
  if (call.memory.empty()) return;
  out << '\n';
  print_device_table(out, devices, memory_columns(call.memory));
}

void print_totals(std::ostream& out, const SimulationReport& report) {
  out << fmt::format("\nWhole simulation, {}\n", format_duration(report.simulated_time));
  print_device_table(out, report.device_names, time_columns(report.device_totals, report.simulated_time));
  out << '\n';
  print_device_table(out, report.device_names, memory_columns(report.memory));
}

}  // namespace

void write_report_table(std::ostream& out, const SimulationReport& report) {
  print_header(out, report);
  for (std::size_t i = 0; i < report.calls.size(); ++i) print_call(out, report, i);
  print_totals(out, report);
}

}  // namespace spmdsim
