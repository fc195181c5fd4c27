// `spmdsim demo`'s options.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spmdsim::cli::demo {

struct DemoOptions {
  int devices = 8;
  bool verbose = false;  // the report of each call before the summary
  std::string json_path;
  std::string trace_path;
};

// The options of `args` (SimGrid's taken out); nothing when --help was asked for (and printed). Throws
// UsageError for a device count out of range.
std::optional<DemoOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::demo
