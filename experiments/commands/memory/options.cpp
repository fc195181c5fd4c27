#include "commands/memory/options.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/device_list.hpp"
#include "common/training_options.hpp"

namespace spmdsim::cli::memory {
namespace {

namespace po = boost::program_options;

FitTarget parse_fit(const std::string& text) {
  if (text.empty()) return FitTarget::none;
  if (text == "batch") return FitTarget::batch;
  if (text == "layers") return FitTarget::layers;
  throw UsageError(fmt::format("unknown --fit '{}'; valid: batch, layers", text));
}

}  // namespace

std::string_view fit_name(FitTarget fit) {
  return fit == FitTarget::batch ? "batch" : "layers";
}

std::int64_t fit_unit(const MemoryCommandOptions& options) {
  return options.fit == FitTarget::batch ? options.setup.train_options.micro_batches : 1;
}

std::optional<MemoryCommandOptions> parse(const std::vector<std::string>& args) {
  std::string devices, model_list, strategy_list, batch, micro_batches, precision, reduce_dtype,
      param_shard_dtype, fit, fit_max, jobs, shard, donate_state;
  PlatformRequest platform;
  ModelRequest model;
  ZeroRequest zero;
  MemoryCommandOptions options;
  po::options_description described("spmdsim memory options");
  const std::string model_help =
      fmt::format("models to size, a comma-separated list of: {} (docs/memory.md)", model_names_text());
  const std::string strategy_help =
      fmt::format("strategies, a comma-separated list of: {} (docs/training.md)", strategy_names_text());
  described.add_options()("help,h", "show this help")(
      "devices", po::value(&devices)->default_value("8"),
      fmt::format("devices N (1 to {}), the first N of the platform", kMaxDevices).c_str())(
      "model", po::value(&model_list)->default_value("gpt2_small"), model_help.c_str())(
      "strategy", po::value(&strategy_list)->default_value("dp,zero1,zero2,zero3"), strategy_help.c_str())(
      "batch", po::value(&batch)->default_value("1"),
      "per-device batch: samples (MLP) or sequences (transformer)")(
      "micro-batches", po::value(&micro_batches)->default_value("1"),
      "gradient accumulation: micro-batches per device and step (dividing --batch)")(
      "precision", po::value(&precision)->default_value("mixed_bf16"),
      "mixed_bf16 (bf16 params and gradients, fp32 master weights: the ZeRO paper's case) or fp32")(
      "reduce-dtype", po::value(&reduce_dtype), kReduceDtypeHelp)(
      "param-shard-dtype", po::value(&param_shard_dtype), kParamShardDtypeHelp)(
      "optimizer", po::value(&options.optimizer_name)->default_value("adam"), "adam, momentum (0.9) or sgd")(
      "fused-optimizer", po::bool_switch(&options.fused_optimizer), kFusedOptimizerHelp)(
      "donate-state", po::value(&donate_state)->default_value("off"), kDonateStateHelp);
  add_zero_options(described, zero);
  add_model_shape_options(described, model);
  described.add_options()(
      "fit", po::value(&fit),
      "instead of one step per model and strategy, search for the largest value that fits: "
      "batch (per-device batch) or layers (transformer blocks of the model's shape)")(
      "fit-max", po::value(&fit_max),
      "--fit: the search's upper bound (default: 65536 for batch, 4096 for layers)");
  add_platform_options(described, platform);
  described.add_options()("jobs", po::value(&jobs), kJobsHelp);
  described.add_options()("shard", po::value(&shard), kShardHelp);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path),
      "also write the rows (and device 0's timelines) as JSON to this file")(
      "plot", po::value(&options.plot_prefix),
      "also plot the peaks by tag, stacked per strategy with the capacity line, and device 0's memory over "
      "the step by tag, to PREFIX.png and PREFIX.svg (python3 with matplotlib; not with --fit)");
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim memory [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
        << "Device memory of one training step for each model and strategy (abstract: shapes only), by\n"
        << "tag, against the ZeRO paper's model states and the device capacity; or, with --fit, the\n"
        << "largest per-device batch or number of transformer blocks that fits.\n\n"
        << described << "\n";
    return std::nullopt;
  }

  auto& setup = options.setup;
  setup.devices = values.attributed({"devices"}, [&] { return parse_device_count(devices, 1); });
  options.fit = values.attributed({"fit"}, [&] { return parse_fit(fit); });
  options.models = values.attributed(
      {"model", "layers", "hidden", "heads", "seq-len", "vocab", "recompute", "attention", "loss", "dropout"},
      [&] {
        const auto names = split_list(model_list);
        ModelRequest shape = model;
        // --fit layers searches the layers: a custom shape needs the other sizes only (and --layers is
        // refused below).
        if (options.fit == FitTarget::layers && shape.layers.empty() &&
            std::find(names.begin(), names.end(), "custom") != names.end())
          shape.layers = std::to_string(1);  // not = "1": GCC 12 warns falsely (-Wrestrict, bug 105329)
        return choose_models(names, shape);
      });
  options.strategies = values.attributed({"strategy"}, [&] {
    std::vector<models::Strategy> chosen;
    for (const auto& name : split_list(strategy_list)) {
      const auto strategy = parse_strategy_option(name);
      if (std::find(chosen.begin(), chosen.end(), strategy) != chosen.end())
        throw UsageError(fmt::format("--strategy names '{}' twice", name));
      chosen.push_back(strategy);
    }
    if (chosen.empty()) throw UsageError("--strategy names no strategy");
    return chosen;
  });
  setup.train_options.zero =
      values.attributed({"reduce-bucket-size", "overlap-comm", "prefetch-depth", "prefetch-bucket-size",
                         "max-live-parameters", "wrap-units", "no-sync", "strategy"},
                        [&] { return parse_zero_options(zero, options.strategies); });
  options.jobs = values.attributed({"jobs"}, [&] { return parse_jobs(jobs); });
  setup.per_device_batch = values.attributed({"batch"}, [&] { return parse_count(batch, "--batch", 1); });
  setup.train_options.micro_batches = static_cast<int>(
      values.attributed({"micro-batches"}, [&] { return parse_count(micro_batches, "--micro-batches", 1); }));
  setup.train_options.precision =
      values.attributed({"precision"}, [&] { return parse_precision(precision); });
  setup.train_options.reduce_dtype = values.attributed({"reduce-dtype", "precision"}, [&] {
    return parse_reduce_dtype(reduce_dtype, setup.train_options.precision);
  });
  setup.train_options.param_shard_dtype =
      values.attributed({"param-shard-dtype", "precision", "strategy"}, [&] {
        return parse_param_shard_dtype(param_shard_dtype, setup.train_options.precision, options.strategies);
      });
  setup.train_options.donate_state =
      values.attributed({"donate-state"}, [&] { return parse_on_off(donate_state, "--donate-state"); });
  setup.optimizer = values.attributed({"optimizer", "fused-optimizer"}, [&] {
    return make_optimizer(options.optimizer_name, 1e-4, options.fused_optimizer);
  });
  values.attributed({"fit", "fit-max", "batch", "micro-batches", "model", "layers", "plot"}, [&] {
    if (options.fit != FitTarget::batch && setup.per_device_batch % setup.train_options.micro_batches != 0)
      throw UsageError(fmt::format("--batch {} is not divisible by --micro-batches {}",
                                   setup.per_device_batch, setup.train_options.micro_batches));
    if (options.fit == FitTarget::none) {
      if (!fit_max.empty()) throw UsageError("--fit-max bounds the search of --fit batch or --fit layers");
      return;
    }
    if (!options.plot_prefix.empty())
      throw UsageError("--plot and --fit exclude each other: the plot shows one step per model and strategy");
    if (options.fit == FitTarget::batch && !values.map()["batch"].defaulted())
      throw UsageError("--batch and --fit batch exclude each other: the search chooses the batch");
    if (options.fit == FitTarget::layers) {
      if (!model.layers.empty())
        throw UsageError("--layers and --fit layers exclude each other: the search chooses the layers");
      for (const auto& m : options.models)
        if (!m.is_transformer())
          throw UsageError(
              fmt::format("--fit layers needs transformers; --model '{}' has no blocks", m.name));
    }
    options.fit_max = fit_max.empty() ? (options.fit == FitTarget::batch ? 65536 : 4096)
                                      : parse_count(fit_max, "--fit-max", 1);
  });
  options.platform =
      values.attributed({"topology", "preset", "nodes", "platform", "hostfile", "host-cpu", "devices"},
                        [&] { return choose_platform(platform, setup.devices); });
  options.shard = values.attributed({"shard"}, [&] { return parse_shard_option(shard); });
  values.attributed({"shard", "plot"}, [&] {
    refuse_with_shard(options.shard, "--plot", !options.plot_prefix.empty(),
                      "it plots the whole sweep; plot the shards' --json merged by `spmdsim merge` with "
                      "experiments/plot_memory.py (docs/sweeps_on_slurm.md)");
  });
  return options;
}

}  // namespace spmdsim::cli::memory
