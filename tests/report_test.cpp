// The reporters over a small deterministic run: the table agrees with the results model and stays short on
// many devices, the JSON round-trips, the Chrome trace parses and has an event per span and memory event.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/units_format.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/report_writers.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using detail::format_bytes;
using detail::format_duration;
using detail::format_percent;

// x @ w then psum on every device (x split, w replicated), then the host reads the result: a pmap call
// with compute, a collective and host transfers, and a device_get call. Pinned to the alpha-beta model so
// the numbers do not move with SimGrid's defaults.
SimulationReport matmul_psum_report(int num_devices, bool timelines = true) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(num_devices)),
                 {.simgrid_config = alpha_beta_config(), .timelines = timelines});
  auto step = pmap([](const Args& a) -> Tree { return psum(matmul(a[0].array(), a[1].array()), "i"); },
                   {.in_axes = Axes::tuple({0, none}), .axis_name = "i", .name = "matmul_psum"});
  Tree out = step(sim, {Array::full({num_devices, 64, 128}, 1.0), Array::full({128, 256}, 0.5)});
  sim.device_get(out);
  return sim.report();
}

std::string table_of(const SimulationReport& report) {
  std::ostringstream out;
  write_report_table(out, report);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The tables of the section headed by the line starting with `heading`: the indented blocks between blank
// lines, up to the next heading.
std::vector<std::vector<std::string>> tables_in(const std::string& text, const std::string& heading) {
  const auto lines = lines_of(text);
  auto line = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.starts_with(heading); });
  if (line == lines.end()) return {};
  std::vector<std::vector<std::string>> tables(1);
  for (++line; line != lines.end() && (line->empty() || line->starts_with(" ")); ++line) {
    if (line->empty())
      tables.emplace_back();
    else
      tables.back().push_back(*line);
  }
  std::erase_if(tables, [](const auto& table) { return table.empty(); });
  return tables;
}

// The row whose first cell is `label`.
std::string row_of(const std::vector<std::string>& table, const std::string& label) {
  for (const auto& line : table)
    if (line == "  " + label || line.starts_with("  " + label + " ")) return line;
  return {};
}

// Compares `actual` with tests/golden/<name>. On a mismatch it writes <name>.unapproved beside the golden
// file, to diff and, if the change is intended, rename over it (Catch2's approval tests). Nothing is
// normalised: the simulation is deterministic and the table prints no wall-clock or path.
void expect_matches_golden(const std::string& actual, const std::string& name) {
  const std::filesystem::path golden = std::filesystem::path(SPMDSIM_GOLDEN_DIR) / name;
  const std::filesystem::path unapproved = golden.string() + ".unapproved";
  std::ifstream in(golden);
  std::ostringstream expected;
  expected << in.rdbuf();
  if (in && expected.str() == actual) {
    std::filesystem::remove(unapproved);
    return;
  }
  std::filesystem::create_directories(golden.parent_path());
  const bool written = static_cast<bool>(std::ofstream(unapproved) << actual);
  ADD_FAILURE()
      << (in ? "output differs from " : "no golden file ") << golden
      << (written ? "; wrote " : "; could not write ") << unapproved
      << ": review it (diff it against the golden file) and rename it over the golden file to approve";
}

TEST(UnitsFormat, DurationsPickAReadableUnit) {
  EXPECT_EQ(format_duration(0), "0.0 us");
  EXPECT_EQ(format_duration(12e-6), "12.0 us");
  EXPECT_EQ(format_duration(1.5e-3), "1.50 ms");
  EXPECT_EQ(format_duration(2.25), "2.250 s");
}

TEST(UnitsFormat, NoiseBelowZeroPrintsAsZero) {
  EXPECT_EQ(format_duration(-1e-20), "0.0 us");
  EXPECT_EQ(format_percent(-1e-12), "0.0%");
  EXPECT_EQ(format_percent(14.04), "14.0%");
}

TEST(UnitsFormat, BytesUseBinaryPrefixes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(32.0 * 1024 * 1024), "32.0 MiB");
  EXPECT_EQ(format_bytes(1e9), "953.7 MiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
}

TEST(ReportTable, HeaderNamesPlatformSettingsAlgorithmsAndTime) {
  const auto report = matmul_psum_report(4);
  const auto table = table_of(report);
  EXPECT_NE(table.find(report.platform), std::string::npos);
  EXPECT_NE(table.find("network/model:CM02"), std::string::npos);
  EXPECT_NE(table.find("all_reduce: " + report.algorithms.at("all_reduce")), std::string::npos);
  EXPECT_NE(table.find("simulated time  " + format_duration(report.simulated_time)), std::string::npos);
}

TEST(ReportTable, OneRowPerDeviceWithTheReportsTimes) {
  const auto report = matmul_psum_report(4);
  const CallReport& call = report.calls.at(0);
  const auto tables = tables_in(table_of(report), "Call 1 of 2: matmul_psum");
  ASSERT_FALSE(tables.empty());
  const auto& table = tables[0];
  ASSERT_EQ(table.size(), 2 + 4u) << "header, rule and one row per device";
  for (const char* column : {"device", "compute", "communication", "psum", "host transfer", "idle", "sent"})
    EXPECT_NE(table[0].find(column), std::string::npos) << column;

  const Seconds duration = call.end - call.start;
  for (std::size_t i = 0; i < call.devices.size(); ++i) {
    const std::string row = row_of(table, report.device_names[static_cast<std::size_t>(call.devices[i])]);
    ASSERT_FALSE(row.empty()) << "device " << call.devices[i];
    const DeviceTimes& t = call.times[i];
    EXPECT_GT(t.compute, 0);
    EXPECT_GT(t.communication.at("psum"), 0);
    EXPECT_NE(row.find(format_duration(t.compute)), std::string::npos) << row;
    EXPECT_NE(row.find(format_percent(100 * t.compute / duration)), std::string::npos) << row;
    for (Seconds part : {t.communication_total(), t.communication.at("psum"), t.transfer, t.idle})
      EXPECT_NE(row.find(format_duration(part)), std::string::npos) << row;
    EXPECT_NE(row.find(format_bytes(t.bytes_sent)), std::string::npos) << row;
  }
}

TEST(ReportTable, MemoryTableShowsPeakCapacityAndTheTagsInUse) {
  const auto report = matmul_psum_report(4);
  const auto tables = tables_in(table_of(report), "Call 1 of 2: matmul_psum");
  ASSERT_EQ(tables.size(), 2u) << "times, then memory";
  const auto& table = tables[1];
  ASSERT_EQ(table.size(), 2 + 4u);
  for (const char* column :
       {"peak", "capacity", "of capacity", "input_shards", "replicated_args", "temporaries"})
    EXPECT_NE(table[0].find(column), std::string::npos) << column;
  // Tags no device used stay out.
  EXPECT_EQ(table[0].find("optimizer_state"), std::string::npos);

  const DeviceMemory& m = report.calls[0].memory.at(0);
  const std::string row = row_of(table, "dev0");
  ASSERT_FALSE(row.empty());
  EXPECT_NE(row.find(format_bytes(m.peak)), std::string::npos) << row;
  EXPECT_NE(row.find(format_bytes(m.capacity)), std::string::npos) << row;
  EXPECT_NE(row.find(format_percent(100 * m.peak / m.capacity)), std::string::npos) << row;
  EXPECT_NE(row.find(format_bytes(m.at_peak[MemoryTag::input_shards.index()])), std::string::npos) << row;
}

TEST(ReportTable, MatchesGoldenForFourDevices) {
  expect_matches_golden(table_of(matmul_psum_report(4)), "report_table_4_devices.txt");
}

// Without timelines a run keeps no span and no memory event, and the same times and peaks: the same table.
TEST(ReportTable, WithoutTimelinesTheSameTableAndNoSpansOrMemoryEvents) {
  const auto report = matmul_psum_report(4, false);
  expect_matches_golden(table_of(report), "report_table_4_devices.txt");
  for (const auto& call : report.calls)
    for (const auto& spans : call.spans) EXPECT_TRUE(spans.empty()) << call.name;
  ASSERT_EQ(report.memory_timelines.size(), 4u);
  for (const auto& events : report.memory_timelines) EXPECT_TRUE(events.empty());
  for (const auto& memory : report.memory) EXPECT_GT(memory.peak, 0);
}

TEST(ReportTable, ManyDevicesShowHeadTailAndSummaryRows) {
  const auto report = matmul_psum_report(40);
  const auto text = table_of(report);
  const auto tables = tables_in(text, "Call 1 of 2: matmul_psum");
  ASSERT_FALSE(tables.empty());
  const auto& table = tables[0];
  for (const char* shown : {"dev0", "dev1", "dev2", "dev3", "dev38", "dev39", "min", "mean", "max"})
    EXPECT_FALSE(row_of(table, shown).empty()) << shown;
  for (const char* hidden : {"dev4", "dev20", "dev37"}) EXPECT_TRUE(row_of(table, hidden).empty()) << hidden;
  EXPECT_FALSE(row_of(table, "... (34 more)").empty());
  EXPECT_EQ(table.size(), 2 + 4 + 1 + 2 + 1 + 3u) << "header, rule, head, ..., tail, rule, min/mean/max";
  EXPECT_LT(lines_of(text).size(), 100u);

  const auto& compute = report.calls[0].times;
  const auto [low, high] = std::minmax_element(
      compute.begin(), compute.end(), [](const auto& a, const auto& b) { return a.compute < b.compute; });
  EXPECT_NE(row_of(table, "min").find(format_duration(low->compute)), std::string::npos);
  EXPECT_NE(row_of(table, "max").find(format_duration(high->compute)), std::string::npos);
}

TEST(ReportJson, RoundTripsThroughText) {
  const auto report = matmul_psum_report(4);
  std::ostringstream out;
  write_report_json(out, report);
  const auto parsed = nlohmann::json::parse(out.str());
  EXPECT_EQ(parsed, report_to_json(report));
  EXPECT_EQ(parsed["schema_version"], kReportSchemaVersion);
  EXPECT_TRUE(out.str().starts_with("{\"schema_version\":")) << "schema_version comes first";
  EXPECT_EQ(parsed["simulated_time"].get<double>(), report.simulated_time);

  ASSERT_EQ(parsed["devices"].size(), report.device_names.size());
  for (std::size_t d = 0; d < report.device_names.size(); ++d) {
    EXPECT_EQ(parsed["devices"][d]["name"], report.device_names[d]);
    EXPECT_EQ(parsed["devices"][d]["times"]["compute"].get<double>(), report.device_totals[d].compute);
    EXPECT_EQ(parsed["devices"][d]["memory"]["peak"].get<double>(), report.memory[d].peak);
  }
  const auto& call = parsed["calls"][0];
  EXPECT_EQ(call["name"], "matmul_psum");
  for (std::size_t i = 0; i < report.calls[0].devices.size(); ++i) {
    const auto& device = call["devices"][i];
    EXPECT_EQ(device["times"]["compute"].get<double>(), report.calls[0].times[i].compute);
    EXPECT_EQ(device["times"]["communication"]["psum"].get<double>(),
              report.calls[0].times[i].communication.at("psum"));
    EXPECT_EQ(device["spans"].size(), report.calls[0].spans[i].size());
    EXPECT_EQ(device["memory"]["at_peak"]["input_shards"].get<double>(),
              report.calls[0].memory[i].at_peak[MemoryTag::input_shards.index()]);
  }
  EXPECT_FALSE(parsed["calls"][1]["devices"][0].contains("memory")) << "device_get records no memory";
}

TEST(ReportJson, MemoryTimelinesAreParallelColumnsOfNumbers) {
  const auto report = matmul_psum_report(4);
  const auto json = report_to_json(report);
  ASSERT_EQ(json["memory_timelines"].size(), report.memory_timelines.size());
  const auto& timeline = json["memory_timelines"][0];
  const auto& events = report.memory_timelines[0];
  ASSERT_FALSE(events.empty());
  for (const char* column : {"time", "in_use", "tag", "delta"}) {
    ASSERT_EQ(timeline[column].size(), events.size()) << column;
    for (const auto& value : timeline[column]) EXPECT_TRUE(value.is_number()) << column;
  }
  EXPECT_EQ(timeline["in_use"].back().get<double>(), events.back().in_use);
  const int tag = timeline["tag"][0];
  EXPECT_EQ(json["memory_tags"][static_cast<std::size_t>(tag)], memory_tag_name(events[0].tag));
}

TEST(ChromeTrace, OneCompleteEventPerSpanAndMemoryCounters) {
  const auto report = matmul_psum_report(4);
  std::ostringstream out;
  write_chrome_trace(out, report);
  const auto trace = nlohmann::json::parse(out.str());
  EXPECT_EQ(trace["displayTimeUnit"], "ns");

  std::size_t spans = 0, memory_events = 0;
  for (const auto& call : report.calls)
    for (const auto& device_spans : call.spans) spans += device_spans.size();
  for (const auto& timeline : report.memory_timelines) memory_events += timeline.size();
  std::size_t complete = 0, counters = 0, names = 0;
  for (const auto& event : trace["traceEvents"]) {
    const std::string ph = event["ph"];
    if (ph == "X") {
      ++complete;
      EXPECT_TRUE(event["cat"] == "compute" || event["cat"] == "communication" || event["cat"] == "transfer");
      EXPECT_GE(event["dur"].get<double>(), 0);
    } else if (ph == "C") {
      ++counters;
      EXPECT_EQ(event["name"], "memory");
      EXPECT_TRUE(event["args"]["bytes"].is_number());
    } else if (ph == "M" && event["name"] == "process_name") {
      ++names;
      EXPECT_EQ(event["args"]["name"], report.device_names[event["pid"].get<std::size_t>()]);
    }
  }
  EXPECT_EQ(complete, spans);
  EXPECT_EQ(counters, memory_events);
  EXPECT_EQ(names, report.device_names.size());
}

TEST(ChromeTrace, SpanTimesAreInMicroseconds) {
  const auto report = matmul_psum_report(4);
  std::ostringstream out;
  write_chrome_trace(out, report);
  const auto trace = nlohmann::json::parse(out.str());
  const Span& first = report.calls[0].spans[1].front();
  const auto& events = trace["traceEvents"];
  const auto match = std::find_if(events.begin(), events.end(), [&](const auto& e) {
    return e["ph"] == "X" && e["pid"] == report.calls[0].devices[1] && e["name"] == first.name;
  });
  ASSERT_NE(match, events.end());
  EXPECT_DOUBLE_EQ((*match)["ts"].get<double>(), first.start * 1e6);
  EXPECT_DOUBLE_EQ((*match)["dur"].get<double>(), (first.end - first.start) * 1e6);
  EXPECT_EQ((*match)["args"]["call"], "matmul_psum");
}

}  // namespace
}  // namespace spmdsim
