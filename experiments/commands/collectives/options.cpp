#include "commands/collectives/options.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/device_list.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::cli::collectives {
namespace {

namespace po = boost::program_options;

// Every name must be registered for at least one chosen collective, and every collective must get one.
void check_algorithm_words(const SweepOptions& options) {
  for (const auto& word : options.algorithm_words) {
    const bool known =
        word == "all" || word == "default" || word == "auto" ||
        std::any_of(options.collectives.begin(), options.collectives.end(), [&](const auto* c) {
          const auto names = algorithm_names(c->kind);
          return std::find(names.begin(), names.end(), word) != names.end();
        });
    if (!known)
      throw UsageError(fmt::format("unknown algorithm '{}' in --algorithms; valid: {}", word,
                                   valid_algorithms_text(options.collectives)));
  }
  for (const auto* c : options.collectives)
    if (algorithms_for(*c, options.algorithm_words, CollectiveLibrary::textbook).empty())
      throw UsageError(fmt::format("no algorithm in --algorithms {} is registered for {}; valid: {}",
                                   fmt::join(options.algorithm_words, ","), c->name,
                                   valid_algorithms_text({c})));
}

}  // namespace

std::optional<SweepOptions> parse(const std::vector<std::string>& args) {
  std::string min_bytes, max_bytes, step_factor, collectives, algorithms, devices, dtype, abstract_above,
      dimension_algorithms, channels, shard;
  PlatformRequest platform;
  SweepOptions options;
  po::options_description described("spmdsim collectives options");
  described.add_options()("help,h", "show this help")("minbytes,b", po::value(&min_bytes)->default_value("8"),
                                                      "smallest message size S (K, M, G: powers of 1024)")(
      "maxbytes,e", po::value(&max_bytes)->default_value("8G"), "largest message size S")(
      "stepfactor,f", po::value(&step_factor)->default_value("2"),
      "multiply the size by this at each step (>= 2)")(
      "collectives",
      po::value(&collectives)->default_value("all_reduce,all_gather,reduce_scatter,all_to_all"),
      "collectives to sweep; JAX names (psum, all_gather, psum_scatter, all_to_all) are accepted too")(
      "algorithms", po::value(&algorithms)->default_value("default"),
      "algorithms per collective, from those registered for it, plus auto (the lowest predicted time per "
      "call); "
      "'all' = every registered one that runs on any platform (all but nvls) plus auto, 'default' = the "
      "collective's default (nccl for all_reduce, all_gather and reduce_scatter on a node preset of NVIDIA "
      "GPUs or of MI300X, as NCCL and RCCL run them there; nccl_ring on other full-mesh nodes; torus on a "
      "TPU slice or torus; else ring, pairwise for all_to_all)")(
      "devices", po::value(&devices)->default_value("8,64"),
      "device counts p to run each collective on (2 to 131072), each on the first p devices of the platform")(
      "dtype", po::value(&dtype)->default_value("float32"),
      "element type: float32, bfloat16, float16, float64, int32");
  add_platform_options(described, platform);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path), "also write the sweep as JSON to this file")(
      "plot", po::value(&options.plot_prefix),
      "also plot time and busbw against size to PREFIX.png and PREFIX.svg (python3 with matplotlib)")(
      "abstract-above", po::value(&abstract_above),
      "run sizes above this many bytes on shapes only (default: what real data would fit in MemAvailable)")(
      "check", po::bool_switch(&options.check),
      "compare each real-data result with a float64 reduction in fixed order and report the largest error")(
      "aggregate", po::bool_switch(&options.aggregate),
      "simulate each ring phase as one transfer each way (abstract rows; real rows' ring all_reduce too, its "
      "values unchanged), exact under the alpha-beta model when p divides the count; docs/performance.md)")(
      "dimension-algorithms", po::value(&dimension_algorithms),
      "what multidim runs along each dimension of the platform, comma-separated: ring, direct, "
      "halving_doubling (default: ring along every one)")(
      "channels", po::value(&channels),
      "channels nccl_ring runs in parallel, each its own ring (default: NCCL's ring channels on a node "
      "preset "
      "of NVIDIA GPUs, a call running on fewer when its size earns fewer; elsewhere one per device of a node "
      "when the devices span several nodes, else 1)")(
      "protocol", po::value(&options.protocol),
      "NCCL's protocol for nccl_ring and nccl on a node preset of NVIDIA GPUs, as NCCL_PROTO: LL, LL128, "
      "Simple (default: the one NCCL's tuner picks for each size; docs/collectives.md#protocols; nccl runs "
      "NVLS with Simple only); RCCL's on mi300x_8gpu: LL, Simple, for its rings (docs/collectives.md#rccl; "
      "its MSCCL programs keep their own)")("shard", po::value(&shard), kShardHelp);
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim collectives [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
        << "An nccl-tests-style sweep: every collective, algorithm and device count over message sizes\n"
        << "minbytes, minbytes x stepfactor, ... up to maxbytes, on one simulated platform.\n\n"
        << described << "\n";
    return std::nullopt;
  }

  options.min_bytes = values.attributed({"minbytes"}, [&] { return parse_size(min_bytes, "--minbytes"); });
  options.max_bytes = values.attributed({"maxbytes"}, [&] { return parse_size(max_bytes, "--maxbytes"); });
  values.attributed({"minbytes", "maxbytes"}, [&] {
    if (options.min_bytes < 1) throw UsageError("--minbytes must be at least 1");
    if (options.min_bytes > options.max_bytes)
      throw UsageError(fmt::format("--minbytes {} is larger than --maxbytes {}", min_bytes, max_bytes));
  });
  options.step_factor = static_cast<ByteCount>(
      values.attributed({"stepfactor"}, [&] { return parse_count(step_factor, "--stepfactor", 2); }));

  values.attributed({"collectives"}, [&] {
    for (const auto& name : split_list(collectives)) {
      const auto* c = &find_collective(name);
      if (std::find(options.collectives.begin(), options.collectives.end(), c) == options.collectives.end())
        options.collectives.push_back(c);
    }
    if (options.collectives.empty()) throw UsageError("--collectives names no collective");
  });
  values.attributed({"algorithms", "collectives"}, [&] {
    options.algorithm_words = split_list(algorithms);
    if (options.algorithm_words.empty()) throw UsageError("--algorithms names no algorithm");
    check_algorithm_words(options);
  });

  options.devices = values.attributed({"devices"}, [&] { return parse_device_list(devices, 2); });

  options.dtype = values.attributed({"dtype"}, [&] { return find_dtype(dtype); });
  const int largest = *std::max_element(options.devices.begin(), options.devices.end());
  options.platform =
      values.attributed({"topology", "preset", "nodes", "platform", "hostfile", "host-cpu", "devices"}, [&] {
        // The sweep's times leave out the host's transfers: an SMPI platform needs no host CPU.
        return choose_platform(platform, largest, HostCpuNeed::first_device_if_none);
      });
  values.attributed({"dimension-algorithms", "devices", "topology", "preset", "nodes", "platform"}, [&] {
    if (!values.map().count("dimension-algorithms")) return;
    options.dimension_algorithms = split_list(dimension_algorithms);
    if (options.devices.size() != 1 || options.devices[0] != largest)
      throw UsageError(
          "--dimension-algorithms follow the platform's shape, so --devices must be one count, the "
          "whole platform");
  });
  values.attributed({"channels"}, [&] {
    if (values.map().count("channels"))
      options.channels = static_cast<int>(parse_count(channels, "--channels", 1, 64));
  });
  values.attributed({"protocol", "preset", "topology", "platform"}, [&] {
    const auto names = nccl_protocol_names();
    if (values.map().count("protocol") &&
        std::find(names.begin(), names.end(), options.protocol) == names.end())
      throw UsageError(
          fmt::format("--protocol '{}' is not one of NCCL's: {}", options.protocol, fmt::join(names, ", ")));
    if (options.protocol == "LL128" && collective_library(options.platform) == CollectiveLibrary::rccl)
      throw UsageError(fmt::format(
          "--protocol LL128: {} runs RCCL, which runs LL128 on gfx90a only; valid there: LL, Simple",
          platform.preset));
  });
  values.attributed({"abstract-above"}, [&] {
    if (values.map().count("abstract-above"))
      options.abstract_above = parse_size(abstract_above, "--abstract-above");
  });
  options.shard = values.attributed({"shard"}, [&] { return parse_shard_option(shard); });
  values.attributed({"shard", "plot"}, [&] {
    refuse_with_shard(options.shard, "--plot", !options.plot_prefix.empty(),
                      "it plots the whole sweep; plot the shards' --json merged by `spmdsim merge` with "
                      "experiments/plot_collectives.py (docs/sweeps_on_slurm.md)");
  });
  values.attributed({"shard", "abstract-above"}, [&] {
    if (options.shard && !options.abstract_above)
      throw UsageError(
          "--shard needs --abstract-above: without it each shard takes the threshold from its own machine's "
          "MemAvailable, and the shards could disagree on which rows run real and which abstract");
  });
  return options;
}

}  // namespace spmdsim::cli::collectives
