// Running the built `spmdsim` as a user does, for the command-line suites (cli_*_test, presets_test): its
// status and output, scratch directories removed after the test, golden files with volatile fields
// normalised, and the table's cells.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scratch_dir.hpp"

namespace spmdsim::testing {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::filesystem::path& path);

// A fresh directory for the current test's files, removed when the returned ScratchDir goes (pass or fail).
ScratchDir scratch_dir();

// `<program> <command> <args>` with stdout and stderr captured in `dir` (stdin and stderr are no terminal:
// no progress bar).
CliRun run_cli(const std::string& program, const std::string& command, const std::string& args,
               const std::filesystem::path& dir);

// The same with `--json FILE` added, in a fresh directory: the JSON the command wrote, or null (and a test
// failure) when it failed.
nlohmann::json run_cli_json(const std::string& program, const std::string& command, const std::string& args);

// A command line a command must refuse, with the first line of its stderr after "spmdsim <command>: ".
struct BadInput {
  std::string name;
  std::string args;
  std::string message;
};

// `<program> <command> <bad.args> --json FILE` in a fresh directory: exit status 2, bad.message on the first
// line of stderr, and no file written.
void expect_refused(const std::string& program, const std::string& command, const BadInput& bad);

// What changes from run to run of the same command: "in 0.05 s wall time" becomes "in <wall> s wall time".
std::string normalised(const std::string& table);

// `<program> <command> <args>` run with --jobs 1 and with --jobs 2 (two simulations at a time, ending in any
// order) gives the same table, CSV and JSON byte for byte, but the wall time.
void expect_same_output_with_two_jobs(const std::string& program, const std::string& command,
                                      const std::string& args);

// Compares `actual` with tests/golden/<name>. On a mismatch it writes <name>.unapproved beside the golden
// file, to diff and, if the change is intended, rename over it.
void expect_matches_golden(const std::string& actual, const std::string& name);

std::vector<std::string> lines_of(const std::string& text);
std::vector<std::string> fields_of(const std::string& line, char separator = ' ');

// A table's data rows (neither comments nor blank), split into cells.
std::vector<std::vector<std::string>> table_rows(const std::string& table);

// Whether a --plot run failed only because no python3 with matplotlib was found (the test then skips).
bool plotting_unavailable(const CliRun& run);
// PREFIX.png and PREFIX.svg exist and are not empty, and the temporary PREFIX.plot-data.json is gone.
void expect_plot_files(const std::filesystem::path& prefix);

}  // namespace spmdsim::testing
