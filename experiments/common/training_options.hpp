// Option values that the training commands (`spmdsim train`, `spmdsim memory`) read alike: counts, the
// optimizer, the precision, the strategy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options/options_description.hpp>

#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/optimizers.hpp"

namespace spmdsim::cli {

// The SimGrid actors a training step keeps at once per device (its program, its communication stream, its
// host copies) and the host's, for the host memory estimate (host_budget.hpp). A collective on `channels`
// channels runs each channel past the first on an actor of its own, on the program and on the communication
// stream at once.
inline std::int64_t training_actors(int devices, int channels = 1) {
  return (3 + 2 * std::int64_t{channels - 1}) * devices + 1;
}

inline constexpr const char* kJobsHelp =
    "simulations run side by side, each in its own process (default: the machine's cores, fewer when the "
    "host's memory cannot hold that many); the output is the same whatever the count";

// --jobs N: 1 to 1024, or 0 when not given (then the cores and the memory decide: parallel_runs).
int parse_jobs(const std::string& text);

// sgd, momentum (0.9) or adam; with `fused`, each parameter's update as one kernel (Optimizer::fused).
models::Optimizer make_optimizer(const std::string& name, double learning_rate, bool fused);

// What --fused-optimizer does, for the commands that take it.
inline constexpr const char* kFusedOptimizerHelp =
    "each parameter's update as one fused kernel (as torch's fused Adam or XLA's fusion run it): one launch "
    "and its boundary bytes per parameter, no intermediates in device memory; the same values";

// What --donate-state does, for the commands that take it.
inline constexpr const char* kDonateStateHelp =
    "on: the step takes over the old params and optimizer state and releases each old leaf as soon as its "
    "new one is made, as PyTorch's and DeepSpeed's in-place updates and JAX's donate_argnums do; "
    "off (default, JAX's default): the old and the new state are both live through the update";

models::Precision parse_precision(const std::string& name);
std::string_view precision_name(models::Precision precision);

// What --reduce-dtype does, for the commands that take it.
inline constexpr const char* kReduceDtypeHelp =
    "mixed_bf16 only: the dtype the gradients are all-reduced or reduce-scattered in, bf16 (default) or f32 "
    "(cast before the reduction, as FSDP's MixedPrecision(reduce_dtype=torch.float32))";
// --reduce-dtype as given (empty: bf16) under `precision`; UsageError for another dtype, or for any under
// fp32.
DType parse_reduce_dtype(const std::string& text, models::Precision precision);
// What --param-shard-dtype does, for the commands that take it.
inline constexpr const char* kParamShardDtypeHelp =
    "mixed_bf16 with zero3 only: the dtype each device keeps its param shards in. bf16 (default): a bfloat16 "
    "copy beside the float32 master shards, as DeepSpeed's ZeRO-3; f32: the shards are the master weights, "
    "each unit's is cast to bfloat16 for its all-gather and the reduced gradient shards are kept in float32, "
    "as FSDP's MixedPrecision keeps its full-precision FlatParameter";
// --param-shard-dtype as given (empty: bf16); UsageError for another dtype, under fp32, or where none of
// `strategies` shards params.
DType parse_param_shard_dtype(const std::string& text, models::Precision precision,
                              const std::vector<models::Strategy>& strategies);
// The precision as the commands' headers state it: its name, then the param shards' dtype and the reduce
// dtype where they are not bf16.
std::string precision_text(const models::TrainOptions& options);

// A registered strategy; UsageError "--strategy: unknown training strategy ..." otherwise.
models::Strategy parse_strategy_option(const std::string& name);

// The registered strategies' names, for --help: "dp, dp-overlap, zero1, zero2, zero3".
std::string strategy_names_text();

// The ZeRO-2/3 and FSDP knobs (models::ZeroOptions) as `train` and `memory` take them, as given (empty: the
// default).
struct ZeroRequest {
  std::string reduce_bucket_size, overlap_comm, prefetch_depth, prefetch_bucket_size, max_live_parameters,
      wrap_units, no_sync;
};
// The ZeRO knobs `strategy` uses, as the commands' headers state them; empty for the strategies without any.
std::string zero_options_text(const models::ZeroOptions& zero, models::Strategy strategy);
void add_zero_options(boost::program_options::options_description& options, ZeroRequest& request);
// The knobs given over the defaults; UsageError for a bad value, or for a knob that none of `strategies`
// uses.
models::ZeroOptions parse_zero_options(const ZeroRequest& request,
                                       const std::vector<models::Strategy>& strategies);

}  // namespace spmdsim::cli
