// `spmdsim validate` as a user runs it: its runs are docs/training.md's validation table (the same published
// figures and the same `spmdsim train` arguments, row for row), a run's simulated step time is what
// `spmdsim train` gives for its arguments, and bad input is refused. The step times' accuracy is what the
// command prints, not a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace spmdsim {
namespace {

using testing::lines_of;
using testing::read_file;
using testing::scratch_dir;

constexpr const char* kCommonArgs = "--precision mixed_bf16 --optimizer adam --steps 1";

struct ListedRun {
  std::string name;
  double published_ms = 0;
  std::string args;  // after "spmdsim train <common arguments> "
};

// `spmdsim validate --list`: each run's name, "  published X ms ...", "  spmdsim train ...".
std::vector<ListedRun> listed_runs(const std::string& args) {
  const auto run = testing::run_cli(SPMDSIM_CLI, "validate", "--list " + args, scratch_dir());
  EXPECT_EQ(run.status, 0) << run.err;
  const auto lines = lines_of(run.out);
  std::vector<ListedRun> runs;
  const std::string train = fmt::format("  spmdsim train {} ", kCommonArgs);
  for (std::size_t i = 0; i + 2 < lines.size(); i += 3) {
    EXPECT_EQ(lines[i + 1].rfind("  published ", 0), 0u) << lines[i + 1];
    EXPECT_EQ(lines[i + 2].rfind(train, 0), 0u) << lines[i + 2];
    runs.push_back({lines[i], std::stod(lines[i + 1].substr(12)), lines[i + 2].substr(train.size())});
  }
  return runs;
}

// A markdown table row's cells, trimmed.
std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::size_t start = 1;
  for (std::size_t bar; (bar = row.find(" | ", start)) != std::string::npos; start = bar + 3)
    cells.push_back(row.substr(start, bar - start));
  cells.push_back(row.substr(start, row.rfind(" |") - start));
  for (auto& cell : cells) cell.erase(0, cell.find_first_not_of(' '));
  return cells;
}

// "1,147 ms (derived)", "~300 ms": the figure in ms.
double published_figure(std::string cell) {
  std::string digits;
  for (char c : cell.substr(0, cell.find(" ms")))
    if (c != ',' && c != '~') digits += c;
  return std::stod(digits);
}

struct DocRow {
  double published_ms;
  std::string args;
};

// The validation table of docs/training.md: each row's published figure and its command's arguments.
std::vector<DocRow> documented_runs() {
  const std::string doc = read_file(SPMDSIM_DOCS_DIR "/training.md");
  const auto section = doc.find("## Validation: step times against published data-parallel runs");
  EXPECT_NE(section, std::string::npos);
  std::vector<DocRow> rows;
  bool in_table = false;
  for (const std::string& line : lines_of(doc.substr(section))) {
    if (line.rfind("| published run |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| ", 0) != 0) break;
    const auto cells = cells_of(line);
    const std::string& command = cells.back();
    EXPECT_TRUE(command.size() > 2 && command.front() == '`' && command.back() == '`') << line;
    rows.push_back({published_figure(cells[1]), command.substr(1, command.size() - 2)});
  }
  return rows;
}

// Every run of the command is a row of the documented table, with its figure (the table rounds it) and its
// command, in the same order, and the table has no other row.
TEST(Validate, RunsAreTheDocumentedValidationTable) {
  const auto runs = listed_runs("");
  const auto rows = documented_runs();
  ASSERT_EQ(runs.size(), rows.size());
  EXPECT_EQ(runs.size(), 20u);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].args, rows[i].args) << runs[i].name;
    EXPECT_NEAR(runs[i].published_ms, rows[i].published_ms, 0.5) << runs[i].name;
  }
}

// The llm-foundry set: the 59 rows of the table, the validation table's 2,048-token MPT rows among them.
TEST(Validate, LlmFoundrySetHoldsEveryEightGpuA100Row) {
  const auto all = listed_runs("--set llm-foundry");
  EXPECT_EQ(all.size(), 59u);
  for (const auto& mpt : listed_runs("--only MPT"))
    EXPECT_EQ(std::count_if(all.begin(), all.end(), [&](const ListedRun& r) { return r.args == mpt.args; }),
              1)
        << mpt.name;
}

// A run's simulated step time is what `spmdsim train` prints for its command.
TEST(Validate, SimulatedStepTimeIsTrainsForTheSameArguments) {
  const std::string only = "llm.c GPT-2 124M, 8x H100";
  const auto listed = listed_runs(fmt::format("--only '{}'", only));
  ASSERT_EQ(listed.size(), 1u);
  const auto run = testing::run_cli(SPMDSIM_CLI, "validate", fmt::format("--only '{}'", only), scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  const auto train =
      testing::run_cli_json(SPMDSIM_CLI, "train", fmt::format("{} {}", kCommonArgs, listed[0].args));
  const double step_ms = train.at("rows").at(0).at("step_time_us").get<double>() / 1000;
  const auto rows = testing::table_rows(run.out);
  ASSERT_EQ(rows.size(), 1u);
  const auto& cells = rows[0];
  ASSERT_GE(cells.size(), 3u);
  EXPECT_EQ(cells[cells.size() - 2], fmt::format("{:.1f}", step_ms)) << run.out;
  EXPECT_EQ(cells[cells.size() - 3], fmt::format("{:.1f}", listed[0].published_ms)) << run.out;
  EXPECT_NE(run.out.find("# 1 of 1 runs within 15%"), std::string::npos) << run.out;
}

struct Refusal {
  std::string name;
  std::string args;
  std::string message;
};

class ValidateBadInput : public ::testing::TestWithParam<Refusal> {};

TEST_P(ValidateBadInput, ExitsTwoWithMessage) {
  const auto run = testing::run_cli(SPMDSIM_CLI, "validate", GetParam().args, scratch_dir());
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(lines_of(run.err).at(0), "spmdsim validate: " + GetParam().message) << run.err;
  EXPECT_EQ(run.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Validate, ValidateBadInput,
    ::testing::Values(
        Refusal{"UnknownSet", "--set mpt", "unknown --set 'mpt'; valid: validation, llm-foundry"},
        Refusal{"OnlyMatchesNothing", "--only Llama", "--only 'Llama' names no run of --set validation"},
        Refusal{"ZeroJobs", "--jobs 0", "--jobs must be a whole number from 1 to 1024 (got '0')"},
        Refusal{"Stray", "extra", "unexpected argument 'extra': every option has a name (--name value)"}),
    [](const auto& test_info) { return test_info.param.name; });

}  // namespace
}  // namespace spmdsim
