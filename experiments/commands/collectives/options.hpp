// `spmdsim collectives`' options, parsed once into a typed struct.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/collectives/catalog.hpp"
#include "common/platform_options.hpp"
#include "common/shard.hpp"
#include "common/sizes.hpp"

namespace spmdsim::cli::collectives {

struct SweepOptions {
  ByteCount min_bytes = 8;
  ByteCount max_bytes = ByteCount{8} << 30;
  ByteCount step_factor = 2;
  std::vector<const Collective*> collectives;
  std::vector<std::string> algorithm_words;  // as given: names, "all", "auto", "default"
  std::vector<int> devices;
  DType dtype = DType::f32;
  ChosenPlatform platform;  // for the largest device count
  std::string csv_path;
  std::string json_path;
  std::string plot_prefix;
  std::optional<ByteCount> abstract_above;
  bool check = false;
  bool aggregate = false;                         // SimulationOptions::aggregate_ring_phases
  std::vector<std::string> dimension_algorithms;  // SimulationOptions::dimension_algorithms
  int channels = 0;                               // SimulationOptions::channels (0: per group)
  std::string protocol;                           // SimulationOptions::protocol (empty: NCCL's tuner's)
  std::optional<Shard> shard;                     // --shard: this slice of the plan's rows only
};

// The options of `args` (SimGrid's taken out), from the command line and --config; nothing when --help was
// asked for (and printed). Throws UsageError naming the option (and the file) for every mistake.
std::optional<SweepOptions> parse(const std::vector<std::string>& args);

}  // namespace spmdsim::cli::collectives
