#include "cli_run.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace spmdsim::testing {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ScratchDir scratch_dir() {
  return ScratchDir("cli");
}

CliRun run_cli(const std::string& program, const std::string& command, const std::string& args,
               const fs::path& dir) {
  const auto out = dir / "stdout.txt";
  const auto err = dir / "stderr.txt";
  const std::string line = fmt::format("'{}' {} {} > '{}' 2> '{}' < /dev/null", program, command, args,
                                       out.string(), err.string());
  const int status = std::system(line.c_str());
  CliRun run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

nlohmann::json run_cli_json(const std::string& program, const std::string& command, const std::string& args) {
  const auto dir = scratch_dir();
  const auto path = dir / "run.json";
  const auto run = run_cli(program, command, fmt::format("{} --json '{}'", args, path.string()), dir);
  EXPECT_EQ(run.status, 0) << run.err;
  return run.status == 0 ? nlohmann::json::parse(read_file(path)) : nlohmann::json();
}

void expect_refused(const std::string& program, const std::string& command, const BadInput& bad) {
  const auto dir = scratch_dir();
  const auto json = dir / "run.json";
  const auto run = run_cli(program, command, fmt::format("{} --json '{}'", bad.args, json.string()), dir);
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(lines_of(run.err).at(0), fmt::format("spmdsim {}: {}", command, bad.message));
  EXPECT_FALSE(fs::exists(json)) << "nothing is written on bad input";
}

std::string normalised(const std::string& table) {
  return std::regex_replace(table, std::regex(R"(in [0-9]+\.[0-9]+ s wall time)"), "in <wall> s wall time");
}

void expect_same_output_with_two_jobs(const std::string& program, const std::string& command,
                                      const std::string& args) {
  const auto dir = scratch_dir();
  const std::regex wall("\"wall_time_s\": [0-9.e+-]+");
  std::map<int, std::vector<std::string>> outputs;
  for (int jobs : {1, 2}) {
    const auto csv = dir / fmt::format("{}.csv", jobs);
    const auto json = dir / fmt::format("{}.json", jobs);
    const auto run =
        run_cli(program, command,
                fmt::format("{} --jobs {} --csv {} --json {}", args, jobs, csv.string(), json.string()), dir);
    ASSERT_EQ(run.status, 0) << run.err;
    outputs[jobs] = {normalised(run.out), read_file(csv),
                     std::regex_replace(read_file(json), wall, "\"wall_time_s\": <wall>")};
  }
  EXPECT_EQ(outputs[1][0], outputs[2][0]);
  EXPECT_EQ(outputs[1][1], outputs[2][1]);
  EXPECT_EQ(outputs[1][2], outputs[2][2]);
}

void expect_matches_golden(const std::string& actual, const std::string& name) {
  const fs::path golden = fs::path(SPMDSIM_GOLDEN_DIR) / name;
  const fs::path unapproved = golden.string() + ".unapproved";
  const bool exists = fs::exists(golden);
  if (exists && read_file(golden) == actual) {
    fs::remove(unapproved);
    return;
  }
  const bool written = static_cast<bool>(std::ofstream(unapproved) << actual);
  ADD_FAILURE()
      << (exists ? "output differs from " : "no golden file ") << golden
      << (written ? "; wrote " : "; could not write ") << unapproved
      << ": review it (diff it against the golden file) and rename it over the golden file to approve";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator))
    if (separator != ' ' || !field.empty()) fields.push_back(field);
  return fields;
}

std::vector<std::vector<std::string>> table_rows(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : lines_of(table))
    if (!line.empty() && !line.starts_with("#")) rows.push_back(fields_of(line));
  return rows;
}

bool plotting_unavailable(const CliRun& run) {
  return run.status == 1 && run.err.find("--plot needs python3 with matplotlib") != std::string::npos;
}

void expect_plot_files(const fs::path& prefix) {
  for (const char* extension : {".png", ".svg"}) {
    const auto path = prefix.string() + extension;
    ASSERT_TRUE(fs::exists(path)) << path;
    EXPECT_GT(fs::file_size(path), 1000u) << path;
  }
  EXPECT_FALSE(fs::exists(prefix.string() + ".plot-data.json"));  // the temporary data is gone
}

}  // namespace spmdsim::testing
