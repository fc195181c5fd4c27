// `spmdsim train`'s options, parsed once into a typed struct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/train/training_run.hpp"
#include "common/platform_options.hpp"
#include "common/shard.hpp"

namespace spmdsim::cli::train {

enum class Scaling { strong, weak };

struct TrainCommandOptions {
  TrainingSetup setup;
  std::string optimizer_name;
  bool fused_optimizer = false;
  Scaling scaling = Scaling::strong;
  std::int64_t batch = 0;  // strong: the global batch; weak: the global batch at the smallest device count
  std::vector<int> devices;
  ChosenPlatform platform;  // for the largest device count
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
  std::string trace_path;
  int jobs = 0;                // --jobs; 0: parallel_runs decides
  std::optional<Shard> shard;  // --shard: this slice of the device counts only
};

// The global batch at `devices`: fixed under strong scaling; under weak scaling it grows with the devices,
// so that each device keeps the per-device batch of the smallest count.
std::int64_t global_batch(const TrainCommandOptions& options, int devices);

inline constexpr double kMiB = 1024.0 * 1024.0;

std::string_view scaling_name(Scaling scaling);

// The options of `args` (SimGrid's taken out), from the command line and --config; nothing when --help was
// asked for (and printed). Throws UsageError naming the option (and the file) for every mistake.
std::optional<TrainCommandOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::train
