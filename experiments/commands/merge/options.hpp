// `spmdsim merge`'s options, parsed once into a typed struct.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spmdsim::cli::merge {

enum class Format { csv, json };

struct MergeOptions {
  Format format = Format::csv;
  std::string output;               // --csv OUT or --json OUT
  std::vector<std::string> shards;  // the shards' files, in any order
};

// The options of `args`; nothing when --help was asked for (and printed). Throws UsageError naming the
// option for every mistake: neither or both of --csv and --json, no shard file.
std::optional<MergeOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::merge
