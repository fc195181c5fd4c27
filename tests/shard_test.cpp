// `--shard K/N` (experiments/common/shard.*): the option's parser and its errors, the slices (every row in
// exactly one shard, as many rows per shard as another give or take one, dealt back and forth), and the
// shards' file format (experiments/common/shard_files.*): what a shard writes reads back, the sweep's
// identity, and the errors of a file that is no shard's.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line.hpp"
#include "common/rows.hpp"
#include "common/shard.hpp"
#include "common/shard_files.hpp"
#include "expect_usage_error.hpp"

namespace spmdsim::cli {
namespace {

using spmdsim::testing::expect_usage_error;

TEST(ShardOption, ReadsKOfNCountingFromZero) {
  const Shard first = parse_shard("0/4");
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.count, 4);
  const Shard last = parse_shard("3/4");
  EXPECT_EQ(last.index, 3);
  EXPECT_EQ(shard_text(last), "3/4");
  EXPECT_EQ(shard_text(parse_shard("0/1")), "0/1");
  EXPECT_FALSE(parse_shard_option("").has_value());
  EXPECT_EQ(parse_shard_option("2/5")->index, 2);
}

TEST(ShardOption, RefusesKOutOfRange) {
  expect_usage_error([] { parse_shard("4/4"); },
                     "--shard 4/4: K must be from 0 to 3 (0-based, as SLURM_ARRAY_TASK_ID under sbatch "
                     "--array=0-3)");
  expect_usage_error([] { parse_shard("1/1"); },
                     "--shard 1/1: K must be from 0 to 0 (0-based, as SLURM_ARRAY_TASK_ID under sbatch "
                     "--array=0-0)");
}

TEST(ShardOption, RefusesNBelowOne) {
  expect_usage_error([] { parse_shard("0/0"); }, "--shard 0/0: N must be a whole number from 1 to 999999999");
}

TEST(ShardOption, RefusesWhatIsNoKOverN) {
  for (const char* text : {"", "3", "/4", "1/", "a/4", "1/b", "-1/4", "1/-4", "1/4/2", "1.0/4", " 1/4",
                           "1/4 ", "1:4", "1/99999999999999999999"})
    expect_usage_error([&] { parse_shard(text); },
                       std::string("--shard takes K/N, slice K of N counting from 0 (K from 0 to N-1, as "
                                   "SLURM_ARRAY_TASK_ID under sbatch --array=0-(N-1)); got '") +
                           text + "'");
}

TEST(ShardSlices, AreDealtBackAndForth) {
  std::vector<int> dealt;
  for (std::size_t row = 0; row < 10; ++row) dealt.push_back(shard_of(row, 4));
  EXPECT_EQ(dealt, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0, 0, 1}));
  EXPECT_EQ(shard_rows({0, 4}, 10), (std::vector<std::size_t>{0, 7, 8}));
  EXPECT_EQ(shard_rows({3, 4}, 10), (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(shard_rows({0, 1}, 3), (std::vector<std::size_t>{0, 1, 2}));
}

// Every row in exactly one shard, each shard's rows ascending, the counts apart by one at most.
TEST(ShardSlices, PartitionTheSweepEvenly) {
  for (std::size_t total : {1u, 2u, 7u, 16u, 31u, 100u, 1001u})
    for (int count = 1; count <= static_cast<int>(std::min<std::size_t>(total, 40)); ++count) {
      std::multiset<std::size_t> seen;
      std::size_t fewest = total, most = 0;
      for (int k = 0; k < count; ++k) {
        const auto rows = shard_rows({k, count}, total);
        EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
        for (auto row : rows) {
          EXPECT_EQ(shard_of(row, count), k);
          seen.insert(row);
        }
        fewest = std::min(fewest, rows.size());
        most = std::max(most, rows.size());
      }
      ASSERT_EQ(seen.size(), total) << total << " rows, " << count << " shards";
      for (std::size_t row = 0; row < total; ++row) EXPECT_EQ(seen.count(row), 1u);
      EXPECT_LE(most - fewest, 1u) << total << " rows, " << count << " shards";
      EXPECT_GE(fewest, 1u);
    }
}

// A sweep's sizes grow along its rows: dealt back and forth, each shard of 4 gets as much of 8 growing
// sizes as another (the pairs 0+7, 1+6, 2+5, 3+4), where dealing round-robin would give the last shard the
// largest of each round.
TEST(ShardSlices, SpreadGrowingRowsEvenly) {
  for (int k = 0; k < 4; ++k) {
    std::size_t sum = 0;
    for (auto row : shard_rows({k, 4}, 8)) sum += row;
    EXPECT_EQ(sum, 7u) << "shard " << k;
  }
}

TEST(ShardSlices, EveryShardNeedsARow) {
  EXPECT_NO_THROW(check_shard_has_rows({0, 3}, 3));
  expect_usage_error(
      [] {
        check_shard_has_rows({1, 4}, 3);
      },
      "--shard 1/4: the sweep has 3 rows, so N must be from 1 to 3 (every shard runs at least "
      "one row)");
  expect_usage_error(
      [] {
        check_shard_has_rows({0, 2}, 1);
      },
      "--shard 0/2: the sweep has 1 row, so N must be from 1 to 1 (every shard runs at least one "
      "row)");
}

// Three rows of two columns (and a column of the table only, which CSV leaves out).
Rows three_rows() {
  Rows rows{.columns = {{.key = "name", .header = "name"}, {.header = "table only"}, {.key = "value"}}};
  rows.cells = {{text_cell("a"), text_cell("x"), whole_cell(1)},
                {text_cell("b"), text_cell("y"), real_cell(0.5, 1)},
                {text_cell("c"), text_cell("z"), empty_cell("-")}};
  return rows;
}

// A command's JSON document with `rows` and a wall time.
std::function<void(std::ostream&)> document(const Rows& rows, double wall, const std::string& dtype = "f32") {
  return [&rows, wall, dtype](std::ostream& out) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["dtype"] = dtype;
    j["wall_time_s"] = wall;
    j["rows"] = rows_json(rows);
    out << j.dump(2) << "\n";
  };
}

const std::vector<std::string> kLabels = {"row a", "row b", "row c"};

TEST(ShardFiles, TheSweepsIdentityIgnoresRowsAndTimesButNotSettingsOrConfigurations) {
  const Rows rows = three_rows();
  Rows fewer = rows;
  fewer.cells.pop_back();
  const auto sweep = shard_tag("collectives", {0, 2}, kLabels, document(rows, 1.0)).sweep;
  EXPECT_EQ(sweep.size(), 16u);
  EXPECT_EQ(shard_tag("collectives", {1, 2}, kLabels, document(fewer, 7.5)).sweep, sweep);
  EXPECT_NE(shard_tag("collectives", {0, 2}, kLabels, document(rows, 1.0, "f64")).sweep, sweep);
  EXPECT_NE(shard_tag("train", {0, 2}, kLabels, document(rows, 1.0)).sweep, sweep);
  EXPECT_NE(shard_tag("collectives", {0, 2}, {"row a", "row b", "row d"}, document(rows, 1.0)).sweep, sweep);
}

// Shard 1/2 of three rows holds rows 1 and 2 (dealt 0, 1, then back: 1).
Rows rows_of_shard_1_of_2() {
  Rows rows = three_rows();
  rows.cells.erase(rows.cells.begin());
  return rows;
}

TEST(ShardFiles, CsvLeadsEachLineWithItsRowInTheSweep) {
  const Rows mine = rows_of_shard_1_of_2();
  const ShardTag tag = shard_tag("memory", {1, 2}, kLabels, document(mine, 1.0));
  ASSERT_EQ(tag.rows, (std::vector<std::size_t>{1, 2}));
  std::ostringstream out;
  write_shard_csv(out, tag, mine);
  EXPECT_EQ(out.str(), "# spmdsim shard: command=memory shard=1/2 sweep_rows=3 sweep=" + tag.sweep +
                           "\nsweep_row,name,value\n1,b,0.5\n2,c,\n");

  const CsvShard read = read_shard_csv(out.str(), "s1.csv");
  EXPECT_EQ(read.source, "s1.csv");
  EXPECT_EQ(read.tag.command, "memory");
  EXPECT_EQ(shard_text(read.tag.shard), "1/2");
  EXPECT_EQ(read.tag.sweep_rows, 3u);
  EXPECT_EQ(read.tag.sweep, tag.sweep);
  EXPECT_EQ(read.tag.rows, tag.rows);
  EXPECT_EQ(read.header, "name,value");
  EXPECT_EQ(read.lines, (std::vector<std::string>{"b,0.5", "c,"}));
}

TEST(ShardFiles, JsonIsTheDocumentWithTheTagFirst) {
  const Rows mine = rows_of_shard_1_of_2();
  const ShardTag tag = shard_tag("train", {1, 2}, kLabels, document(mine, 2.5));
  std::ostringstream out;
  write_shard_json(out, tag, document(mine, 2.5));
  const auto written = nlohmann::ordered_json::parse(out.str());
  EXPECT_EQ(written.begin().key(), "shard");
  EXPECT_EQ(written["shard"].dump(), R"({"command":"train","shard":"1/2","sweep_rows":3,"sweep":")" +
                                         tag.sweep + R"(","rows":[1,2]})");

  const JsonShard read = read_shard_json(out.str(), "s1.json");
  EXPECT_EQ(read.tag.rows, tag.rows);
  EXPECT_EQ(read.tag.sweep, tag.sweep);
  std::ostringstream unsharded;
  document(mine, 2.5)(unsharded);
  EXPECT_EQ(read.document.dump(2) + "\n", unsharded.str()) << "the document as the unsharded run writes it";
}

TEST(ShardFiles, WritersAreTheUnshardedOnesWithoutATag) {
  const Rows all = three_rows();
  std::ostringstream csv, expected_csv, json, expected_json;
  csv_writer(std::nullopt, all)(csv);
  write_csv(expected_csv, all);
  EXPECT_EQ(csv.str(), expected_csv.str());
  json_writer(std::nullopt, document(all, 1.0))(json);
  document(all, 1.0)(expected_json);
  EXPECT_EQ(json.str(), expected_json.str());
}

const std::string kTagLine =
    "# spmdsim shard: command=collectives shard=0/2 sweep_rows=3 sweep=0123456789abcdef\n";

TEST(ShardFiles, CsvOfNoShardIsRefused) {
  const std::string start = "'x.csv' is no shard's file of spmdsim --shard: ";
  const auto refused = [&](const std::string& text, const std::string& why) {
    expect_usage_error([&] { read_shard_csv(text, "x.csv"); }, start + why);
  };
  refused("", "its first line does not start with '# spmdsim shard: '");
  refused("name,value\na,1\n", "its first line does not start with '# spmdsim shard: '");
  refused(kTagLine + "name,value\n", "its second line does not start with 'sweep_row,'");
  refused(kTagLine + "sweep_row,name,value\n0,a,1", "its last line is cut short");
  refused(kTagLine + "sweep_row,name,value\nx,a,1\n",
          "line 3's sweep_row must be a whole number from 0 to 999999999 (got 'x')");
  refused(kTagLine + "sweep_row,name,value\n0\n", "line 3 has no sweep_row");
  refused(kTagLine + "sweep_row,name,value\n0,a,1\n0,b,2\n",
          "row 0 is out of order or past the sweep's 3 rows");
  refused(kTagLine + "sweep_row,name,value\n3,a,1\n", "row 3 is out of order or past the sweep's 3 rows");
  refused("# spmdsim shard: command=collectives shard=2/2 sweep_rows=3 sweep=0123456789abcdef\nsweep_row,a\n",
          "--shard 2/2: K must be from 0 to 1 (0-based, as SLURM_ARRAY_TASK_ID under sbatch --array=0-1)");
  refused("# spmdsim shard: command=collectives shard=0/2 sweep_rows=3\nsweep_row,a\n",
          "its first line has no sweep=");
  refused("# spmdsim shard: command=collectives shard=0/2 sweep_rows=3 sweep=xyz\nsweep_row,a\n",
          "sweep 'xyz' is not 16 hexadecimal digits");
  refused("# spmdsim shard: command=Collectives shard=0/2 sweep_rows=3 sweep=0123456789abcdef\nsweep_row,a\n",
          "command 'Collectives' is no spmdsim command");
  refused("# spmdsim shard: command=a command=b shard=0/2 sweep_rows=3 sweep=0123456789abcdef\nsweep_row,a\n",
          "'command=b' in its first line is no new key=value");
}

TEST(ShardFiles, JsonOfNoShardIsRefused) {
  const std::string start = "'x.json' is no shard's file of spmdsim --shard: ";
  const auto refused = [&](const std::string& text, const std::string& why) {
    expect_usage_error([&] { read_shard_json(text, "x.json"); }, start + why);
  };
  const std::string tag =
      R"("shard": {"command": "train", "shard": "0/2", "sweep_rows": 3, "sweep": "0123456789abcdef", "rows": [0]})";
  refused("{",
          "not JSON ([json.exception.parse_error.101] parse error at line 1, column 2: syntax error while "
          "parsing object key - unexpected end of input; expected string literal)");
  refused(R"({"rows": []})", "no \"shard\" object");
  refused("{" + tag + "}", "no \"rows\" array");
  refused("{" + tag + R"(, "rows": []})", "it lists 1 rows' indices for 0 rows");
  refused(R"({"shard": {"command": "train", "shard": "0/2", "sweep_rows": 3, "rows": [0]}, "rows": [{}]})",
          "its \"shard\" has no \"sweep\" text");
  refused(
      R"({"shard": {"command": "train", "shard": "0/2", "sweep_rows": -3, "sweep": "0123456789abcdef", "rows": [0]}, "rows": [{}]})",
      "sweep_rows is no whole number");
  EXPECT_NO_THROW(read_shard_json("{" + tag + R"(, "rows": [{}]})", "x.json"));
}

}  // namespace
}  // namespace spmdsim::cli
