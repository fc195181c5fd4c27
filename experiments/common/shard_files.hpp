// What a shard's --csv and --json files carry beyond the rows the unsharded run writes, so that `spmdsim
// merge` can put the rows back in the sweep's order, find a missing or doubled shard and refuse shards of
// different sweeps; the unsharded run's files stay as they were. Both sides of the format live here.
//
// CSV:  a first line "# spmdsim shard: command=collectives shard=1/4 sweep_rows=37 sweep=<16 hex digits>",
//       then the unsharded run's header and lines, each led by a "sweep_row" field: the row's index in the
//       sweep.
// JSON: the unsharded run's document with a "shard" object first: {"command", "shard": "1/4", "sweep_rows",
//       "sweep", "rows": [the rows' indices in the sweep]}.
//
// `sweep` tells sweeps apart: a hash of the command, each row's configuration and every field of the JSON
// document but the rows and the summed fields, which differ from run to run of one sweep.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/rows.hpp"
#include "common/shard.hpp"

namespace spmdsim::cli {

// The fields of a JSON document that differ from run to run of one sweep: merge writes the shards' sum.
inline constexpr std::array<std::string_view, 2> kSummedFields = {"wall_time_s", "simulated_time_s"};

struct ShardTag {
  std::string command;  // the spmdsim command: "collectives", "train", "memory"
  Shard shard;
  std::size_t sweep_rows = 0;     // the whole sweep's
  std::string sweep;              // the sweep's identity: 16 hexadecimal digits
  std::vector<std::size_t> rows;  // the shard's rows' indices in the sweep, ascending
};

// The tag of `shard`'s files for a sweep of `command` whose rows' configurations are `labels` (one per row
// of the whole sweep), whose JSON document (this shard's, as an unsharded run writes it) `write_json`
// writes.
ShardTag shard_tag(std::string_view command, Shard shard, const std::vector<std::string>& labels,
                   const std::function<void(std::ostream&)>& write_json);

// The tag line, then `rows` (the shard's, parallel to tag.rows) as write_csv writes them, each line led by
// its index in the sweep.
void write_shard_csv(std::ostream& out, const ShardTag& tag, const Rows& rows);

// The JSON document `write_json` writes (rows parallel to tag.rows), with the tag first.
void write_shard_json(std::ostream& out, const ShardTag& tag,
                      const std::function<void(std::ostream&)>& write_json);

// --csv's writer: write_csv of `rows`, or for a shard's run (`tag`) write_shard_csv of them. It refers to
// `tag` and `rows`, which must outlive it.
std::function<void(std::ostream&)> csv_writer(const std::optional<ShardTag>& tag, const Rows& rows);

// --json's writer: `write_json`, or for a shard's run (`tag`, which must outlive it) write_shard_json over
// it.
std::function<void(std::ostream&)> json_writer(const std::optional<ShardTag>& tag,
                                               std::function<void(std::ostream&)> write_json);

// A shard's CSV as merge reads it.
struct CsvShard {
  std::string source;  // the file's name, for messages
  ShardTag tag;
  std::string header;              // the unsharded run's header line
  std::vector<std::string> lines;  // the rows' lines as the unsharded run writes them, parallel to tag.rows
};

// A shard's JSON as merge reads it.
struct JsonShard {
  std::string source;  // the file's name, for messages
  ShardTag tag;
  nlohmann::ordered_json document;  // without the tag; its "rows" parallel to tag.rows
};

// Read `text`, the file `source`. Throws UsageError naming `source` and what is wrong when it is no shard's
// file or is cut short.
CsvShard read_shard_csv(const std::string& text, const std::string& source);
JsonShard read_shard_json(const std::string& text, const std::string& source);

}  // namespace spmdsim::cli
