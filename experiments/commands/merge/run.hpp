// `spmdsim merge`: joins the CSV or JSON files that the shards of a sweep (`--shard K/N` of collectives,
// train or memory) wrote into the file the unsharded run writes, after checking that they are every shard
// of one sweep.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli::merge {

// Runs the subcommand on its arguments (after "merge"); returns the exit status.
int run(const std::string& program, const std::vector<std::string>& args);

}  // namespace spmdsim::cli::merge
