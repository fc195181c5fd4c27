// `spmdsim demo` as a newcomer runs it: the built program (SPMDSIM_CLI). Its output against a golden file,
// the per-call report only with --verbose, and the summary's figures against the JSON report of the same run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace spmdsim {
namespace {

using testing::fields_of;
using testing::lines_of;
using testing::scratch_dir;

testing::CliRun run_demo(const std::string& args) {
  return testing::run_cli(SPMDSIM_CLI, "demo", args, scratch_dir());
}

// The summary: from its first comment line to the end.
std::string summary_of(const std::string& out) {
  const auto at = out.find("# summary:");
  return at == std::string::npos ? std::string() : out.substr(at);
}

// The summary table's header and rows, split into cells.
std::vector<std::vector<std::string>> summary_table(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : lines_of(summary_of(out)))
    if (!line.empty() && (line.starts_with("#device") || !line.starts_with("#")))
      rows.push_back(fields_of(line));
  return rows;
}

TEST(Demo, OutputMatchesGoldenFile) {
  const auto run = run_demo("");
  ASSERT_EQ(run.status, 0) << run.err;
  testing::expect_matches_golden(run.out, "demo_8_devices.txt");
}

TEST(Demo, VerboseAddsTheReportOfEachCallBeforeTheSameSummary) {
  const auto plain = run_demo("");
  const auto verbose = run_demo("--verbose");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(verbose.status, 0) << verbose.err;
  EXPECT_EQ(plain.out.find("Call 1 of"), std::string::npos);
  EXPECT_NE(verbose.out.find("Call 1 of 31: scale"), std::string::npos);
  EXPECT_NE(verbose.out.find("Call 31 of 31"), std::string::npos);
  EXPECT_FALSE(summary_of(plain.out).empty());
  EXPECT_EQ(summary_of(verbose.out), summary_of(plain.out));
}

// Every cell of the summary is the JSON report's figure for that device, as the table rounds it.
TEST(Demo, SummaryIsTheReportsTotalsPerDevice) {
  const auto dir = scratch_dir();
  const auto json_path = dir / "report.json";
  const auto run = testing::run_cli(SPMDSIM_CLI, "demo", "--json " + json_path.string(), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  const auto report = nlohmann::json::parse(testing::read_file(json_path));
  const auto table = summary_table(run.out);
  ASSERT_EQ(table.size(), report["devices"].size() + 1);
  const auto& header = table.front();
  for (std::size_t d = 0; d < report["devices"].size(); ++d) {
    const auto& device = report["devices"][d];
    const auto& row = table[d + 1];
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(row[0], device["name"]);
    const auto& times = device["times"];
    const auto& memory = device["memory"];
    for (std::size_t c = 1; c < header.size(); ++c) {
      const std::string& column = header[c];
      const auto name = column.substr(0, column.find('('));
      if (column.ends_with("(us)")) {
        const double seconds = name == "compute"    ? times["compute"].get<double>()
                               : name == "transfer" ? times["transfer"].get<double>()
                               : name == "idle"     ? std::max(times["idle"].get<double>(), 0.0)
                                                    : times["communication"][name].get<double>();
        EXPECT_EQ(row[c], fmt::format("{:.3f}", seconds * 1e6)) << column << " of " << row[0];
      } else {
        const double expected =
            name == "peak" ? memory["peak"].get<double>() : memory["at_peak"][name].get<double>();
        EXPECT_EQ(row[c], fmt::format("{:.0f}", expected)) << column << " of " << row[0];
      }
    }
  }
}

TEST(Demo, RefusesAnOutOfRangeDeviceCount) {
  testing::expect_refused(
      SPMDSIM_CLI, "demo",
      {"OneDevice", "--devices 1", "--devices must be a whole number from 2 to 131072 (got '1')"});
  testing::expect_refused(SPMDSIM_CLI, "demo",
                          {"TooManyDevices", "--devices 262144",
                           "--devices must be a whole number from 2 to 131072 (got '262144')"});
}

}  // namespace
}  // namespace spmdsim
