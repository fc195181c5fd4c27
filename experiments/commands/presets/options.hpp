// `spmdsim presets`' options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/presets/catalog.hpp"

namespace spmdsim::cli::presets {

struct PresetsOptions {
  std::vector<const Kind*> kinds;
  std::string json_path;
};

// The options of `args`; nothing when --help was asked for (and printed). Throws UsageError for an unknown
// --kind.
std::optional<PresetsOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::presets
