// `spmdsim memory`'s options, parsed once into a typed struct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/memory/memory_run.hpp"
#include "common/model_options.hpp"
#include "common/platform_options.hpp"
#include "common/shard.hpp"

namespace spmdsim::cli::memory {

enum class FitTarget { none, batch, layers };

struct MemoryCommandOptions {
  std::vector<ModelChoice> models;
  std::vector<models::Strategy> strategies;
  MemorySetup setup;  // the model and strategy of each run are set per run
  std::string optimizer_name;
  bool fused_optimizer = false;
  FitTarget fit = FitTarget::none;
  std::int64_t fit_max = 0;
  ChosenPlatform platform;
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
  int jobs = 0;  // --jobs; 0: parallel_runs decides (the --fit search runs one step after another)
  std::optional<Shard> shard;  // --shard: this slice of the (model, strategy) pairs only
};

std::string_view fit_name(FitTarget fit);

// What one step of the search moves: the batch by --micro-batches (each micro-batch gets a whole share), the
// layers by one.
std::int64_t fit_unit(const MemoryCommandOptions& options);

// The options of `args` (SimGrid's taken out), from the command line and --config; nothing when --help was
// asked for (and printed). Throws UsageError naming the option (and the file) for every mistake.
std::optional<MemoryCommandOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::memory
