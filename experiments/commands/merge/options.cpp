#include "commands/merge/options.hpp"

#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"

namespace spmdsim::cli::merge {

namespace po = boost::program_options;

std::optional<MergeOptions> parse(const std::vector<std::string>& args) {
  std::string csv, json;
  MergeOptions options;
  po::options_description described("spmdsim merge options");
  described.add_options()("help,h", "show this help")(
      "csv", po::value(&csv), "join the shards' CSV files (--shard K/N --csv) into this file")(
      "json", po::value(&json), "join the shards' JSON files (--shard K/N --json) into this file");
  po::options_description hidden;
  hidden.add_options()("shards", po::value(&options.shards));
  po::options_description all;
  all.add(described).add(hidden);
  po::positional_options_description positional;
  positional.add("shards", -1);
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), values);
    po::notify(values);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (values.count("help")) {
    std::cout
        << "usage: spmdsim merge (--csv OUT | --json OUT) SHARD_FILE...\n\n"
        << "Joins what the N shards of a sweep (spmdsim collectives, train or memory with --shard K/N)\n"
        << "wrote into the file the unsharded run writes: every row in the sweep's order, byte for byte,\n"
        << "the JSON's wall_time_s and simulated_time_s the shards' sum (docs/sweeps_on_slurm.md).\n\n"
        << described << "\n";
    return std::nullopt;
  }
  if (csv.empty() == json.empty())
    throw UsageError(
        "give one of --csv OUT (to join the shards' CSV files) or --json OUT (their JSON files)");
  options.format = csv.empty() ? Format::json : Format::csv;
  options.output = csv.empty() ? json : csv;
  if (options.shards.empty())
    throw UsageError(fmt::format("no shard files: give the files of every shard after --{} OUT",
                                 csv.empty() ? "json" : "csv"));
  return options;
}

}  // namespace spmdsim::cli::merge
