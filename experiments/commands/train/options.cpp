#include "commands/train/options.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "common/device_list.hpp"
#include "common/model_options.hpp"
#include "common/training_options.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::cli::train {
namespace po = boost::program_options;

std::int64_t global_batch(const TrainCommandOptions& options, int devices) {
  if (options.scaling == Scaling::strong) return options.batch;
  return options.batch / options.devices.front() * devices;
}

std::string_view scaling_name(Scaling scaling) {
  return scaling == Scaling::strong ? "strong" : "weak";
}

std::optional<TrainCommandOptions> parse(const std::vector<std::string>& args) {
  std::string devices, scaling, batch, strategy, micro_batches, precision, reduce_dtype, param_shard_dtype,
      steps, bucket_mb, prefetch, seed, jobs, fusion, shard, algorithm, donate_state, trace_once;
  double learning_rate = 0;
  PlatformRequest platform;
  ModelRequest model;
  ZeroRequest zero;
  TrainCommandOptions options;
  const std::string strategy_help = fmt::format("one of: {} (docs/training.md)", strategy_names_text());
  po::options_description described("spmdsim train options");
  described.add_options()("help,h", "show this help")(
      "devices", po::value(&devices)->default_value("1,2,4,8"),
      "device counts p to train on (1 to 131072), each in its own simulation on the first p devices of the "
      "platform")("scaling", po::value(&scaling)->default_value("strong"),
                  "strong: the same global batch at every count; weak: the per-device batch of the smallest "
                  "count at every "
                  "count")(
      "batch", po::value(&batch)->default_value("256"),
      "global batch (weak scaling: at the smallest device count), in samples or a transformer's sequences; "
      "each device gets an equal share")("steps", po::value(&steps)->default_value("10"),
                                         "training steps per device count")(
      "strategy", po::value(&strategy)->default_value("dp"), strategy_help.c_str())(
      "bucket-mb", po::value(&bucket_mb),
      "dp-overlap: gradient bucket cap in MiB (default 25, as PyTorch DDP's bucket_cap_mb)");
  add_zero_options(described, zero);
  described.add_options()("micro-batches", po::value(&micro_batches)->default_value("1"),
                          "gradient accumulation: micro-batches per device and step")(
      "precision", po::value(&precision)->default_value("fp32"),
      "fp32, or mixed_bf16 (bf16 compute and gradients, fp32 master weights)")(
      "reduce-dtype", po::value(&reduce_dtype), kReduceDtypeHelp)(
      "param-shard-dtype", po::value(&param_shard_dtype), kParamShardDtypeHelp)(
      "optimizer", po::value(&options.optimizer_name)->default_value("sgd"), "sgd, momentum (0.9) or adam")(
      "fused-optimizer", po::bool_switch(&options.fused_optimizer), kFusedOptimizerHelp)(
      "donate-state", po::value(&donate_state)->default_value("off"), kDonateStateHelp)(
      "fusion", po::value(&fusion)->default_value("on"),
      "on: chains of elementwise ops and their reductions run as one kernel each, as XLA fuses them (one "
      "read of the inputs, one write of the output); off: every op its own kernel, to see the unfused cost")(
      "learning-rate", po::value(&learning_rate)->default_value(0.01), "the optimizer's learning rate")(
      "abstract", po::bool_switch(&options.setup.abstract),
      "train on shapes only: every cost and size, no values (and no loss)")(
      "trace-once", po::value(&trace_once)->default_value("on"),
      "on: on shapes only, the step's program runs once and every device replays it (the same times and "
      "memory, far less work at many devices; a strategy that reads its rank runs on every device); off: "
      "it runs on every device (docs/scale.md)")(
      "algorithm", po::value(&algorithm),
      "the all_reduce, all_gather and reduce_scatter algorithm: one registered for all three (ring, nccl, "
      "nccl_ring, direct, ...) or auto (default: nccl on a node preset of NVIDIA GPUs or of MI300X, the "
      "choice per call NCCL or RCCL makes there; nccl_ring on other full-mesh nodes; torus on a TPU slice or "
      "torus; else ring; docs/collectives.md)")(
      "aggregate", po::bool_switch(&options.setup.aggregate),
      "simulate each ring phase of a collective on shapes (a transformer's, or --abstract) as one transfer "
      "each way, plus the other messages' latencies, instead of message by message: the same times under "
      "the alpha-beta model, for large device counts")(
      "read-loss", po::bool_switch(&options.setup.read_loss_every_step),
      "read the loss back to the host after every step, as the tutorials' loop prints it: a device->host "
      "transfer per step (the transfer column); otherwise only the last step's loss is read, after the run")(
      "seed", po::value(&seed)->default_value("0"), "seed of the initial params and the random batches")(
      "prefetch", po::value(&prefetch)->default_value("0"),
      "batches in flight ahead of the step, as flax.jax_utils.prefetch_to_device's size: the host puts "
      "batch k+N on the devices (an asynchronous device_put) before step k, so its transfer overlaps the "
      "steps before it and the transfer column shows only what the devices still wait for; 0: each batch "
      "goes with its step");
  const std::string model_help =
      fmt::format("the model: {} (docs/training.md); transformers train abstract only (shapes, no values)",
                  model_names_text());
  described.add_options()("model", po::value(&model.model)->default_value("mlp"), model_help.c_str());
  add_model_shape_options(described, model);
  add_platform_options(described, platform);
  described.add_options()("jobs", po::value(&jobs), kJobsHelp);
  described.add_options()("shard", po::value(&shard), kShardHelp);
  described.add_options()("csv", po::value(&options.csv_path), "also write the rows as CSV to this file")(
      "json", po::value(&options.json_path), "also write the run as JSON to this file")(
      "trace", po::value(&options.trace_path),
      "also write the Chrome trace (chrome://tracing, ui.perfetto.dev) of the run at the largest device "
      "count "
      "to this file: every device's compute, communication and transfer spans, its memory as a counter")(
      "plot", po::value(&options.plot_prefix),
      "also plot throughput, efficiency and the step time's breakdown against the devices to PREFIX.png and "
      "PREFIX.svg (python3 with matplotlib)");
  add_config_option(described);
  const OptionValues values(args, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim train [options] [--config FILE] [--cfg=simgrid/setting:value ...]\n\n"
        << "Strong or weak scaling of data-parallel training of a model (the MLP [784, 256, 128, 10] or a\n"
        << "transformer) over device counts, each count in its own simulation on one simulated platform.\n\n"
        << described << "\n";
    return std::nullopt;
  }

  auto& setup = options.setup;
  setup.model = values.attributed(
      {"model", "layers", "hidden", "heads", "seq-len", "vocab", "recompute", "attention", "loss", "dropout"},
      [&] { return choose_models({model.model}, model).front(); });
  if (setup.model.is_transformer()) setup.abstract = true;  // the header says so
  options.devices = values.attributed({"devices"}, [&] { return parse_device_list(devices, 1); });
  std::sort(options.devices.begin(), options.devices.end());
  values.attributed({"scaling"}, [&] {
    if (scaling == "strong")
      options.scaling = Scaling::strong;
    else if (scaling == "weak")
      options.scaling = Scaling::weak;
    else
      throw UsageError(fmt::format("unknown --scaling '{}'; valid: strong, weak", scaling));
  });
  options.batch = values.attributed({"batch"}, [&] { return parse_count(batch, "--batch", 1); });
  setup.steps =
      static_cast<int>(values.attributed({"steps"}, [&] { return parse_count(steps, "--steps", 1); }));
  setup.seed = static_cast<unsigned>(values.attributed(
      {"seed"}, [&] { return parse_count(seed, "--seed", 0, std::numeric_limits<unsigned>::max()); }));
  options.jobs = values.attributed({"jobs"}, [&] { return parse_jobs(jobs); });
  setup.prefetch = static_cast<int>(
      values.attributed({"prefetch"}, [&] { return parse_count(prefetch, "--prefetch", 0); }));
  setup.train_options.micro_batches = static_cast<int>(
      values.attributed({"micro-batches"}, [&] { return parse_count(micro_batches, "--micro-batches", 1); }));
  setup.train_options.strategy =
      values.attributed({"strategy"}, [&] { return parse_strategy_option(strategy); });
  values.attributed({"bucket-mb", "strategy"}, [&] {
    if (bucket_mb.empty()) return;
    if (setup.train_options.strategy != models::Strategy::dp_overlap)
      throw UsageError("--bucket-mb applies to --strategy dp-overlap only");
    std::size_t used = 0;
    double mib = 0;
    try {
      mib = std::stod(bucket_mb, &used);
    } catch (const std::exception&) {
    }
    if (used != bucket_mb.size() || !(mib > 0) || !std::isfinite(mib))
      throw UsageError(fmt::format("--bucket-mb must be a positive number of MiB (got '{}')", bucket_mb));
    setup.train_options.bucket_bytes = mib * kMiB;
  });
  setup.train_options.zero =
      values.attributed({"reduce-bucket-size", "overlap-comm", "prefetch-depth", "prefetch-bucket-size",
                         "max-live-parameters", "wrap-units", "no-sync", "strategy"},
                        [&] { return parse_zero_options(zero, {setup.train_options.strategy}); });
  setup.train_options.precision =
      values.attributed({"precision"}, [&] { return parse_precision(precision); });
  setup.train_options.reduce_dtype = values.attributed({"reduce-dtype", "precision"}, [&] {
    return parse_reduce_dtype(reduce_dtype, setup.train_options.precision);
  });
  setup.train_options.param_shard_dtype =
      values.attributed({"param-shard-dtype", "precision", "strategy"}, [&] {
        return parse_param_shard_dtype(param_shard_dtype, setup.train_options.precision,
                                       {setup.train_options.strategy});
      });
  setup.train_options.donate_state =
      values.attributed({"donate-state"}, [&] { return parse_on_off(donate_state, "--donate-state"); });
  setup.algorithm = values.attributed({"algorithm"}, [&] {
    if (algorithm.empty() || algorithm == "auto") return algorithm;
    const auto gathers = algorithm_names(CollectiveKind::all_gather);
    const auto scatters = algorithm_names(CollectiveKind::reduce_scatter);
    std::vector<std::string> valid;
    for (auto name : algorithm_names(CollectiveKind::all_reduce)) {
      if (std::find(gathers.begin(), gathers.end(), name) != gathers.end() &&
          std::find(scatters.begin(), scatters.end(), name) != scatters.end())
        valid.emplace_back(name);
    }
    if (std::find(valid.begin(), valid.end(), algorithm) == valid.end())
      throw UsageError(
          fmt::format("--algorithm '{}' is not registered for all_reduce, all_gather and "
                      "reduce_scatter; valid: {}, auto",
                      algorithm, fmt::join(valid, ", ")));
    return algorithm;
  });
  setup.fusion = values.attributed({"fusion"}, [&] { return parse_on_off(fusion, "--fusion"); });
  setup.train_options.trace_once =
      values.attributed({"trace-once"}, [&] { return parse_on_off(trace_once, "--trace-once"); });
  setup.optimizer = values.attributed({"optimizer", "learning-rate"}, [&] {
    if (!(learning_rate > 0) || !std::isfinite(learning_rate))
      throw UsageError(
          fmt::format("--learning-rate must be a positive finite number (got {})", learning_rate));
    return make_optimizer(options.optimizer_name, learning_rate, options.fused_optimizer);
  });
  values.attributed({"batch", "devices", "scaling", "micro-batches"}, [&] {
    const int shared_by = options.scaling == Scaling::strong ? 0 : options.devices.front();
    for (int p : options.devices) {
      if (options.batch % (shared_by ? shared_by : p) != 0)
        throw UsageError(
            fmt::format("--batch {} is not divisible by {} devices: each device gets an equal share of "
                        "the global batch",
                        options.batch, shared_by ? shared_by : p));
      const auto per_device = global_batch(options, p) / p;
      if (per_device % setup.train_options.micro_batches != 0)
        throw UsageError(
            fmt::format("the per-device batch {} at {} devices is not divisible by --micro-batches {}",
                        per_device, p, setup.train_options.micro_batches));
    }
  });
  options.platform =
      values.attributed({"topology", "preset", "nodes", "platform", "hostfile", "host-cpu", "devices"},
                        [&] { return choose_platform(platform, options.devices.back()); });
  options.shard = values.attributed({"shard"}, [&] { return parse_shard_option(shard); });
  values.attributed({"shard", "plot", "trace"}, [&] {
    refuse_with_shard(options.shard, "--plot", !options.plot_prefix.empty(),
                      "it plots the whole sweep; plot the shards' --json merged by `spmdsim merge` with "
                      "experiments/plot_train.py (docs/sweeps_on_slurm.md)");
    refuse_with_shard(options.shard, "--trace", !options.trace_path.empty(),
                      "it traces the run at the largest device count; run that count on its own");
  });
  return options;
}

}  // namespace spmdsim::cli::train
