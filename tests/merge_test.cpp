// `spmdsim merge`'s joining (experiments/commands/merge/merging.*): the shards' files of a sweep, in any
// order, give back the unsharded run's CSV and JSON byte for byte (the JSON's wall time the shards' sum);
// and each way shards fail to be the whole of one sweep is refused with its message: a shard missing or
// given twice, shards of another command, cut or sweep, other columns or settings, a file short of a row or
// holding another shard's.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands/merge/merging.hpp"
#include "common/command_line.hpp"
#include "common/rows.hpp"
#include "common/shard.hpp"
#include "common/shard_files.hpp"
#include "expect_usage_error.hpp"

namespace spmdsim::cli::merge {
namespace {

using spmdsim::testing::expect_usage_error;

// A sweep of `total` rows, as a command would hold them.
struct Sweep {
  std::string command = "collectives";
  std::size_t total = 7;
  std::string dtype = "float32";
  std::string column = "value";

  std::vector<std::string> labels() const {
    std::vector<std::string> all;
    for (std::size_t i = 0; i < total; ++i) all.push_back(fmt::format("row {}", i));
    return all;
  }

  // The rows `indices` of the sweep: a name, a real and an empty cell each.
  Rows rows(const std::vector<std::size_t>& indices) const {
    Rows rows{.columns = {{.key = "name"}, {.key = column}, {.key = "note"}}};
    for (auto i : indices)
      rows.cells.push_back({text_cell(fmt::format("r{}", i)),
                            real_cell(0.1 * static_cast<double>(i) + 1e-9, 3), empty_cell("-")});
    return rows;
  }

  std::vector<std::size_t> all_rows() const {
    std::vector<std::size_t> indices(total);
    for (std::size_t i = 0; i < total; ++i) indices[i] = i;
    return indices;
  }

  // The document with `rows`, each shard's wall time and a simulated time of 0.25 s per shard.
  std::function<void(std::ostream&)> json(const Rows& rows, double wall, double simulated = 0.25) const {
    return [this, &rows, wall, simulated](std::ostream& out) {
      nlohmann::ordered_json j;
      j["schema_version"] = 1;
      j["command"] = "spmdsim " + command;
      j["dtype"] = dtype;
      j["wall_time_s"] = wall;
      j["rows"] = rows_json(rows);
      j["simulated_time_s"] = simulated;
      out << j.dump(2) << "\n";
    };
  }

  // Shard k of n's files, as `spmdsim <command> --shard k/n --csv --json` writes them.
  std::pair<std::string, std::string> shard_files(int k, int n) const {
    const Rows mine = rows(shard_rows({k, n}, total));
    const double wall = 1.0 + k;
    const ShardTag tag = shard_tag(command, {k, n}, labels(), json(mine, wall));
    std::ostringstream csv, json_text;
    write_shard_csv(csv, tag, mine);
    write_shard_json(json_text, tag, json(mine, wall));
    return {csv.str(), json_text.str()};
  }

  std::string unsharded_csv() const {
    std::ostringstream out;
    write_csv(out, rows(all_rows()));
    return out.str();
  }
};

CsvShard csv_shard(const Sweep& sweep, int k, int n) {
  return read_shard_csv(sweep.shard_files(k, n).first, fmt::format("shard-{}.csv", k));
}
JsonShard json_shard(const Sweep& sweep, int k, int n) {
  return read_shard_json(sweep.shard_files(k, n).second, fmt::format("shard-{}.json", k));
}

std::vector<CsvShard> csv_shards(const Sweep& sweep, int n) {
  std::vector<CsvShard> shards;
  for (int k = n - 1; k >= 0; --k) shards.push_back(csv_shard(sweep, k, n));  // any order
  return shards;
}
std::vector<JsonShard> json_shards(const Sweep& sweep, int n) {
  std::vector<JsonShard> shards;
  for (int k = 0; k < n; ++k) shards.push_back(json_shard(sweep, k, n));
  std::rotate(shards.begin(), shards.begin() + 1, shards.end());
  return shards;
}

TEST(Merge, CsvIsTheUnshardedRunsWhateverTheCut) {
  const Sweep sweep;
  for (int n = 1; n <= 7; ++n) EXPECT_EQ(merged_csv(csv_shards(sweep, n)), sweep.unsharded_csv()) << n;
}

TEST(Merge, JsonIsTheUnshardedRunsWithTheTimesSummed) {
  const Sweep sweep;
  const Rows all = sweep.rows(sweep.all_rows());
  for (int n = 1; n <= 7; ++n) {
    double wall = 0;
    for (int k = 0; k < n; ++k) wall += 1.0 + k;
    std::ostringstream expected;
    sweep.json(all, wall, 0.25 * n)(expected);
    EXPECT_EQ(merged_json(json_shards(sweep, n)).dump(2) + "\n", expected.str()) << n;
  }
}

TEST(Merge, RefusesAMissingShard) {
  const Sweep sweep;
  auto shards = csv_shards(sweep, 4);
  shards.erase(shards.begin() + 1);  // shard 2/4
  expect_usage_error([&] { merged_csv(shards); },
                     "shard 2/4 is missing: merge needs all 4 shards, 0/4 to 3/4");
  auto json = json_shards(sweep, 4);
  json.erase(json.begin(), json.begin() + 2);
  expect_usage_error([&] { merged_json(json); },
                     "shards 1/4, 2/4 are missing: merge needs all 4 shards, 0/4 to 3/4");
}

TEST(Merge, RefusesAShardGivenTwice) {
  const Sweep sweep;
  auto shards = csv_shards(sweep, 3);
  shards.push_back(csv_shard(sweep, 1, 3));
  shards.back().source = "again.csv";
  expect_usage_error([&] { merged_csv(shards); }, "shard 1/3 is given twice: 'shard-1.csv' and 'again.csv'");
}

TEST(Merge, RefusesShardsOfAnotherCommand) {
  Sweep train;
  train.command = "train";
  auto shards = csv_shards(Sweep{}, 2);
  shards.push_back(csv_shard(train, 0, 2));
  shards.back().source = "train.csv";
  expect_usage_error(
      [&] { merged_csv(shards); },
      "'train.csv' is a shard of spmdsim train, 'shard-1.csv' of spmdsim collectives: merge joins "
      "the shards of one sweep");
}

TEST(Merge, RefusesShardsOfAnotherCut) {
  auto shards = csv_shards(Sweep{}, 2);
  shards.push_back(csv_shard(Sweep{}, 2, 3));
  expect_usage_error([&] { merged_csv(shards); },
                     "'shard-2.csv' is shard 2/3, 'shard-1.csv' shard 1/2: the shards of one sweep share N");
}

TEST(Merge, RefusesShardsOfASweepOfOtherRows) {
  Sweep longer;
  longer.total = 8;
  auto shards = csv_shards(Sweep{}, 2);
  shards[1] = csv_shard(longer, 0, 2);
  expect_usage_error([&] { merged_csv(shards); },
                     "'shard-0.csv' is a shard of a sweep of 8 rows, 'shard-1.csv' of one of 7: shards of "
                     "different sweeps");
}

TEST(Merge, RefusesOtherColumns) {
  Sweep other;
  other.column = "time";
  auto shards = csv_shards(Sweep{}, 2);
  shards[1] = csv_shard(other, 0, 2);
  expect_usage_error([&] { merged_csv(shards); },
                     "'shard-0.csv' has the columns name,time,note, 'shard-1.csv' name,value,note: shards of "
                     "different sweeps");
}

TEST(Merge, RefusesCsvOfOtherSettings) {
  Sweep other;
  other.dtype = "float64";  // the CSV does not show it; the sweep's identity does
  auto shards = csv_shards(Sweep{}, 2);
  shards[1] = csv_shard(other, 0, 2);
  const auto sweep_of = [](const CsvShard& s) { return s.tag.sweep; };
  expect_usage_error(
      [&] { merged_csv(shards); },
      fmt::format("'shard-0.csv' and 'shard-1.csv' are shards of different sweeps: their settings "
                  "or rows' configurations differ (sweep {} and {})",
                  sweep_of(shards[1]), sweep_of(shards[0])));
}

TEST(Merge, RefusesJsonOfOtherSettingsNamingTheField) {
  Sweep other;
  other.dtype = "float64";
  auto shards = json_shards(Sweep{}, 2);  // 1/2, 0/2
  shards[1] = json_shard(other, 0, 2);
  expect_usage_error(
      [&] { merged_json(shards); },
      "'shard-0.json' and 'shard-1.json' differ in \"dtype\" (\"float64\" and \"float32\"): shards "
      "of different sweeps");
}

TEST(Merge, RefusesJsonOfOtherFields) {
  auto shards = json_shards(Sweep{}, 2);
  shards[1].document.erase("dtype");
  expect_usage_error(
      [&] { merged_json(shards); },
      "'shard-0.json' has the fields schema_version, command, wall_time_s, simulated_time_s, "
      "'shard-1.json' schema_version, command, dtype, wall_time_s, simulated_time_s: shards of "
      "different sweeps");
}

TEST(Merge, RefusesAWallTimeThatIsNoNumber) {
  auto shards = json_shards(Sweep{}, 2);
  shards[1].document["wall_time_s"] = "soon";
  expect_usage_error([&] { merged_json(shards); },
                     "'shard-0.json': \"wall_time_s\" is \"soon\", not a number");
}

TEST(Merge, RefusesAFileShortOfARow) {
  auto shards = csv_shards(Sweep{}, 2);  // 1/2 holds 1, 2, 5, 6
  shards[0].tag.rows.erase(shards[0].tag.rows.begin() + 1);
  shards[0].lines.erase(shards[0].lines.begin() + 1);
  expect_usage_error(
      [&] { merged_csv(shards); },
      "'shard-1.csv' lacks row 2 of the sweep: shard 1/2 of a sweep of 7 rows holds 4 rows, the file 3");
  shards = csv_shards(Sweep{}, 2);
  shards[0].tag.rows.pop_back();
  shards[0].lines.pop_back();
  expect_usage_error(
      [&] { merged_csv(shards); },
      "'shard-1.csv' lacks row 6 of the sweep: shard 1/2 of a sweep of 7 rows holds 4 rows, the file 3");
}

TEST(Merge, RefusesAFileHoldingAnotherShardsRow) {
  auto shards = csv_shards(Sweep{}, 2);  // 1/2 holds 1, 2, 5, 6
  shards[0].tag.rows.insert(shards[0].tag.rows.begin() + 2, 3);
  shards[0].lines.insert(shards[0].lines.begin() + 2, "r3,0.3,");
  expect_usage_error([&] { merged_csv(shards); },
                     "'shard-1.csv' holds row 3 of the sweep, which is shard 0/2's, not 1/2's");
}

TEST(Merge, RefusesNothing) {
  expect_usage_error([] { merged_csv({}); }, "no shard files to merge");
  expect_usage_error([] { merged_json({}); }, "no shard files to merge");
}

}  // namespace
}  // namespace spmdsim::cli::merge
