// Option values that the training commands (`spmdsim train`, `spmdsim memory`) read alike: counts, the
// optimizer, the precision, the strategy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/optimizers.hpp"

namespace spmdsim::cli {

// sgd, momentum (0.9) or adam; with `fused`, each parameter's update as one kernel (Optimizer::fused).
models::Optimizer make_optimizer(const std::string& name, double learning_rate, bool fused);

// What --fused-optimizer does, for the commands that take it.
inline constexpr const char* kFusedOptimizerHelp =
    "each parameter's update as one fused kernel (as torch's fused Adam or XLA's fusion run it): one launch "
    "and its boundary bytes per parameter, no intermediates in device memory; the same values";

models::Precision parse_precision(const std::string& name);
std::string_view precision_name(models::Precision precision);

// A registered strategy; UsageError "--strategy: unknown training strategy ..." otherwise.
models::Strategy parse_strategy_option(const std::string& name);

// The registered strategies' names, for --help: "dp, dp-overlap, zero1, zero2, zero3".
std::string strategy_names_text();

}  // namespace spmdsim::cli
