#include "commands/merge/run.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "commands/merge/merging.hpp"
#include "commands/merge/options.hpp"
#include "common/command_line.hpp"
#include "common/output_files.hpp"
#include "common/shard_files.hpp"

namespace spmdsim::cli::merge {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path))
    throw UsageError(fmt::format("cannot read '{}' ({})", path, in ? "a directory" : std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int run(const std::string& /*program*/, const std::vector<std::string>& args) {
  const auto parsed = parse(args);
  if (!parsed) return 0;
  const MergeOptions& options = *parsed;
  const bool csv = options.format == Format::csv;
  OutputFiles outputs({{csv ? "--csv" : "--json", options.output}});

  // Every file is read and checked before the output is written.
  std::string merged;
  ShardTag first;
  if (csv) {
    std::vector<CsvShard> shards;
    for (const auto& path : options.shards) shards.push_back(read_shard_csv(read_text(path), path));
    merged = merged_csv(shards);
    first = shards.front().tag;
  } else {
    std::vector<JsonShard> shards;
    for (const auto& path : options.shards) shards.push_back(read_shard_json(read_text(path), path));
    merged = merged_json(shards).dump(2) + "\n";
    first = shards.front().tag;
  }
  outputs.write(options.output, [&](std::ostream& out) { out << merged; });
  outputs.commit();
  std::cout << fmt::format("# merged {} shards of a {}-row spmdsim {} sweep into {}\n", options.shards.size(),
                           first.sweep_rows, first.command, options.output);
  return 0;
}

}  // namespace spmdsim::cli::merge
