// The built `spmdsim` as a Slurm job array runs it, on one machine: each sweep (collectives, train, memory,
// memory --fit) cut into shards with --shard K/N, the shards' --csv and --json joined by `spmdsim merge`,
// gives the unsharded run's files byte for byte (the JSON's wall and simulated time aside: the shards' sum);
// and the bad inputs of --shard and merge exit 2 with their message, writing nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace spmdsim {
namespace testing {

// gtest names a failing case by it.
void PrintTo(const BadInput& bad, std::ostream* out) {
  *out << bad.name;
}

}  // namespace testing
namespace {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::read_file;
using testing::run_cli;
using testing::scratch_dir;

// The JSON with what differs from run to run of one sweep (wall and simulated time) normalised.
std::string without_times(const std::string& json) {
  static const std::regex times("\"(wall_time_s|simulated_time_s)\": [0-9.e+-]+");
  return std::regex_replace(json, times, "\"$1\": <time>");
}

// `spmdsim <command> <args>` unsharded and cut into `shards` shards, then merged: the same CSV, the same JSON
// but its times; the merged simulated time is the unsharded one's but for rounding.
void expect_shards_merge_into_the_unsharded_run(const std::string& command, const std::string& args,
                                                int shards) {
  const auto dir = scratch_dir();
  const auto whole = run_cli(SPMDSIM_CLI, command,
                             fmt::format("{} --csv '{}' --json '{}'", args, (dir / "whole.csv").string(),
                                         (dir / "whole.json").string()),
                             dir);
  ASSERT_EQ(whole.status, 0) << whole.err;
  std::string csvs, jsons;
  for (int k = 0; k < shards; ++k) {
    const auto csv = dir / fmt::format("shard-{}.csv", k);
    const auto json = dir / fmt::format("shard-{}.json", k);
    const auto run = run_cli(
        SPMDSIM_CLI, command,
        fmt::format("{} --shard {}/{} --csv '{}' --json '{}'", args, k, shards, csv.string(), json.string()),
        dir);
    ASSERT_EQ(run.status, 0) << run.err;
    // Listed last to first: merge takes the shards in any order.
    csvs = fmt::format("'{}' {}", csv.string(), csvs);
    jsons = fmt::format("'{}' {}", json.string(), jsons);
  }
  const auto merged_csv =
      run_cli(SPMDSIM_CLI, "merge", fmt::format("--csv '{}' {}", (dir / "merged.csv").string(), csvs), dir);
  ASSERT_EQ(merged_csv.status, 0) << merged_csv.err;
  EXPECT_EQ(merged_csv.out, fmt::format("# merged {} shards of a {}-row spmdsim {} sweep into {}\n", shards,
                                        lines_of(read_file(dir / "whole.csv")).size() - 1, command,
                                        (dir / "merged.csv").string()));
  const auto merged_json = run_cli(SPMDSIM_CLI, "merge",
                                   fmt::format("--json '{}' {}", (dir / "merged.json").string(), jsons), dir);
  ASSERT_EQ(merged_json.status, 0) << merged_json.err;

  EXPECT_EQ(read_file(dir / "merged.csv"), read_file(dir / "whole.csv"));
  const std::string unsharded = read_file(dir / "whole.json");
  const std::string merged = read_file(dir / "merged.json");
  EXPECT_EQ(without_times(merged), without_times(unsharded));
  const auto unsharded_json = nlohmann::json::parse(unsharded);
  if (unsharded_json.contains("simulated_time_s")) {
    const double expected = unsharded_json["simulated_time_s"].get<double>();
    EXPECT_NEAR(nlohmann::json::parse(merged)["simulated_time_s"].get<double>(), expected, 1e-9 * expected);
  }
}

TEST(Shards, CollectivesMergeIntoTheUnshardedSweep) {
  expect_shards_merge_into_the_unsharded_run(
      "collectives",
      "-b 1K -e 64K -f 4 --devices 2,4 --collectives all_reduce,all_gather,reduce_scatter --algorithms ring "
      "--abstract-above 16K --check --cfg=network/model:CM02 --cfg=network/crosstraffic:0",
      4);
}

// Shard 1/2 of 1, 2 and 4 devices holds 2 and 4: it trains on 1 device too, for the efficiency's base.
TEST(Shards, TrainMergesIntoTheUnshardedRunEvenWithoutTheSmallestCount) {
  expect_shards_merge_into_the_unsharded_run("train", "--devices 1,2,4 --batch 8 --steps 2", 2);
}

TEST(Shards, MemoryMergesIntoTheUnshardedRun) {
  expect_shards_merge_into_the_unsharded_run(
      "memory", "--model mlp --devices 2 --batch 4 --strategy dp,zero1,zero2,zero3", 3);
}

TEST(Shards, MemoryFitMergesIntoTheUnshardedRun) {
  expect_shards_merge_into_the_unsharded_run(
      "memory", "--model mlp --devices 2 --strategy dp,zero3 --fit batch --fit-max 64", 2);
}

TEST(Shards, OneShardIsTheWholeSweep) {
  expect_shards_merge_into_the_unsharded_run("memory",
                                             "--model mlp --devices 2 --batch 4 --strategy dp,zero1", 1);
}

// The unsharded sweep's files carry no shard tag.
TEST(Shards, UnshardedFilesHaveNoTag) {
  const auto dir = scratch_dir();
  const auto run =
      run_cli(SPMDSIM_CLI, "memory",
              fmt::format("--model mlp --devices 2 --batch 4 --strategy dp --csv '{}' --json '{}'",
                          (dir / "run.csv").string(), (dir / "run.json").string()),
              dir);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(read_file(dir / "run.csv").starts_with("model,strategy,"));
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir / "run.json")).contains("shard"));
}

const std::vector<testing::BadInput> kBadShards = {
    {"Garbage", "--shard two/4",
     "--shard takes K/N, slice K of N counting from 0 (K from 0 to N-1, as SLURM_ARRAY_TASK_ID under sbatch "
     "--array=0-(N-1)); got 'two/4'"},
    {"KOutOfRange", "--shard 4/4",
     "--shard 4/4: K must be from 0 to 3 (0-based, as SLURM_ARRAY_TASK_ID under sbatch --array=0-3)"},
    {"NZero", "--shard 0/0", "--shard 0/0: N must be a whole number from 1 to 999999999"},
    {"MoreShardsThanRows", "--model mlp --devices 2 --strategy dp,zero1 --shard 0/3",
     "--shard 0/3: the sweep has 2 rows, so N must be from 1 to 2 (every shard runs at least one row)"},
    {"Plot", "--model mlp --devices 2 --shard 0/2 --plot p",
     "--plot is not for --shard: it plots the whole sweep; plot the shards' --json merged by `spmdsim merge` "
     "with experiments/plot_memory.py (docs/sweeps_on_slurm.md)"},
};

class BadShardTest : public ::testing::TestWithParam<testing::BadInput> {};

TEST_P(BadShardTest, MemoryExitsTwoWithMessage) {
  testing::expect_refused(SPMDSIM_CLI, "memory", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shards, BadShardTest, ::testing::ValuesIn(kBadShards),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(BadShard, CollectivesNeedAnAbstractThreshold) {
  testing::expect_refused(
      SPMDSIM_CLI, "collectives",
      {"", "-b 1K -e 4K --devices 2 --shard 0/2",
       "--shard needs --abstract-above: without it each shard takes the threshold from its own "
       "machine's MemAvailable, and the shards could disagree on which rows run real and which "
       "abstract"});
}

TEST(BadShard, CollectivesRefuseMoreShardsThanRows) {
  testing::expect_refused(
      SPMDSIM_CLI, "collectives",
      {"", "-b 1K -e 2K --devices 2 --collectives all_reduce --abstract-above 1M --shard 2/3",
       "--shard 2/3: the sweep has 2 rows, so N must be from 1 to 2 (every shard runs at least "
       "one row)"});
}

TEST(BadShard, TrainRefusesATrace) {
  testing::expect_refused(
      SPMDSIM_CLI, "train",
      {"", "--devices 1,2 --shard 0/2 --trace t.json",
       "--trace is not for --shard: it traces the run at the largest device count; run that "
       "count on its own"});
}

// `spmdsim merge <args>` in `dir`: exit status 2, `message` on stderr's first line, no out.csv or out.json.
void expect_merge_refused(const std::string& args, const std::string& message, const fs::path& dir) {
  const auto run = run_cli(SPMDSIM_CLI, "merge", args, dir);
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(lines_of(run.err).at(0), "spmdsim merge: " + message);
  EXPECT_FALSE(fs::exists(dir / "out.csv"));
  EXPECT_FALSE(fs::exists(dir / "out.json"));
}

TEST(BadMerge, RefusesWhatIsNoWholeSetOfShards) {
  const auto dir = scratch_dir();
  for (int k = 0; k < 3; ++k) {
    const auto run =
        run_cli(SPMDSIM_CLI, "memory",
                fmt::format("--model mlp --devices 2 --batch 4 --strategy dp,zero1,zero2 --shard {}/3 "
                            "--csv '{}'",
                            k, (dir / fmt::format("s{}.csv", k)).string()),
                dir);
    ASSERT_EQ(run.status, 0) << run.err;
  }
  const std::string out = (dir / "out.csv").string();
  const std::string s0 = (dir / "s0.csv").string(), s1 = (dir / "s1.csv").string(),
                    s2 = (dir / "s2.csv").string();
  expect_merge_refused(fmt::format("--csv {} {} {}", out, s0, s2),
                       "shard 1/3 is missing: merge needs all 3 shards, 0/3 to 2/3", dir);
  expect_merge_refused(fmt::format("--csv {} {} {} {} {}", out, s0, s1, s2, s1),
                       fmt::format("shard 1/3 is given twice: '{}' and '{}'", s1, s1), dir);
  const auto whole = dir.write("whole.csv", "model,strategy\nmlp,dp\n");
  expect_merge_refused(
      fmt::format("--csv {} {} {}", out, s0, whole.string()),
      fmt::format("'{}' is no shard's file of spmdsim --shard: its first line does not start with "
                  "'# spmdsim shard: '",
                  whole.string()),
      dir);
  expect_merge_refused(
      fmt::format("--json {} {}", (dir / "out.json").string(), s0),
      fmt::format("'{}' is no shard's file of spmdsim --shard: not JSON ([json.exception.parse_"
                  "error.101] parse error at line 1, column 1: syntax error while parsing value - "
                  "invalid literal; last read: '#')",
                  s0),
      dir);
  expect_merge_refused(
      fmt::format("--csv {} {} {}/missing.csv", out, s0, dir.path().string()),
      fmt::format("cannot read '{}/missing.csv' (No such file or directory)", dir.path().string()), dir);
}

TEST(BadMerge, RefusesMissingOptions) {
  const auto dir = scratch_dir();
  expect_merge_refused(
      "a.csv", "give one of --csv OUT (to join the shards' CSV files) or --json OUT (their JSON files)", dir);
  expect_merge_refused(
      fmt::format("--csv {} --json {} a", (dir / "out.csv").string(), (dir / "out.json").string()),
      "give one of --csv OUT (to join the shards' CSV files) or --json OUT (their JSON files)", dir);
  expect_merge_refused(fmt::format("--csv {}", (dir / "out.csv").string()),
                       "no shard files: give the files of every shard after --csv OUT", dir);
  expect_merge_refused("--frobnicate", "unrecognised option '--frobnicate'", dir);
}

}  // namespace
}  // namespace spmdsim
