// Joining the files of a sweep's shards (common/shard_files.hpp) into the unsharded run's: the checks that
// they are the N shards of one sweep, each given once and each whole, then the rows in the sweep's order.
// Both functions throw UsageError naming the files when the shards are of different commands, cuts or
// sweeps, when a shard is given twice or is missing, or when a file lacks rows of its shard or holds
// another's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/shard_files.hpp"

namespace spmdsim::cli::merge {

// The unsharded run's CSV: its header and every row, in the sweep's order.
std::string merged_csv(const std::vector<CsvShard>& shards);

// The unsharded run's JSON document: its fields (the same in every shard; kSummedFields the shards' sum)
// and every row, in the sweep's order.
nlohmann::ordered_json merged_json(const std::vector<JsonShard>& shards);

}  // namespace spmdsim::cli::merge
