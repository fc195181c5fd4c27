#include "common/training_options.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli {

models::Optimizer make_optimizer(const std::string& name, double learning_rate, bool fused) {
  const auto unfused = [&] {
    if (name == "sgd") return models::Optimizer::sgd(learning_rate);
    if (name == "momentum") return models::Optimizer::momentum(learning_rate);
    if (name == "adam") return models::Optimizer::adam(learning_rate);
    throw UsageError(fmt::format("unknown --optimizer '{}'; valid: sgd, momentum, adam", name));
  };
  return fused ? unfused().fused() : unfused();
}

models::Precision parse_precision(const std::string& name) {
  if (name == "fp32") return models::Precision::fp32;
  if (name == "mixed_bf16") return models::Precision::mixed_bf16;
  throw UsageError(fmt::format("unknown --precision '{}'; valid: fp32, mixed_bf16", name));
}

std::string_view precision_name(models::Precision precision) {
  return precision == models::Precision::fp32 ? "fp32" : "mixed_bf16";
}

namespace {

// The value of a mixed-precision dtype option (`option` names it in errors): bf16 or f32.
DType bf16_or_f32(const std::string& text, std::string_view option) {
  if (text == "bf16") return DType::bf16;
  if (text == "f32") return DType::f32;
  throw UsageError(fmt::format("unknown {} '{}'; valid: bf16, f32", option, text));
}

}  // namespace

DType parse_reduce_dtype(const std::string& text, models::Precision precision) {
  if (text.empty()) return DType::bf16;
  if (precision != models::Precision::mixed_bf16)
    throw UsageError("--reduce-dtype applies to --precision mixed_bf16 only");
  return bf16_or_f32(text, "--reduce-dtype");
}

DType parse_param_shard_dtype(const std::string& text, models::Precision precision,
                              const std::vector<models::Strategy>& strategies) {
  if (text.empty()) return DType::bf16;
  if (precision != models::Precision::mixed_bf16)
    throw UsageError("--param-shard-dtype applies to --precision mixed_bf16 only");
  if (std::find(strategies.begin(), strategies.end(), models::Strategy::zero3) == strategies.end())
    throw UsageError("--param-shard-dtype applies to --strategy zero3 only");
  return bf16_or_f32(text, "--param-shard-dtype");
}

std::string precision_text(const models::TrainOptions& options) {
  const std::string name(precision_name(options.precision));
  if (options.precision != models::Precision::mixed_bf16) return name;
  std::vector<std::string> notes;
  if (options.param_shard_dtype != DType::bf16)
    notes.push_back(fmt::format("{} param shards", dtype_name(options.param_shard_dtype)));
  if (options.reduce_dtype != DType::bf16)
    notes.push_back(fmt::format("gradients reduced in {}", dtype_name(options.reduce_dtype)));
  return notes.empty() ? name : fmt::format("{} ({})", name, fmt::join(notes, ", "));
}

models::Strategy parse_strategy_option(const std::string& name) {
  try {
    return models::parse_strategy(name);
  } catch (const ValueError& e) {
    throw UsageError(fmt::format("--strategy: {}", e.what()));
  }
}

std::string strategy_names_text() {
  std::vector<std::string_view> names;
  for (const auto& info : models::training_strategies()) names.push_back(info.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string zero_options_text(const models::ZeroOptions& zero, models::Strategy strategy) {
  if (strategy != models::Strategy::zero2 && strategy != models::Strategy::zero3) return {};
  std::string text =
      fmt::format("reduce buckets of {} elements, overlap_comm {}{}", zero.reduce_bucket_elements,
                  zero.overlaps(strategy) ? "on" : "off", zero.no_sync ? ", no_sync" : "");
  if (strategy == models::Strategy::zero3)
    text += fmt::format(
        "; prefetch {} wrap unit(s) of {} and under {} elements, at most {} live", zero.prefetch_units,
        zero.wrap_units == 0 ? std::string("the whole model") : fmt::format("{} layer(s)", zero.wrap_units),
        zero.prefetch_elements, zero.max_live_elements);
  return text;
}

void add_zero_options(boost::program_options::options_description& options, ZeroRequest& request) {
  namespace po = boost::program_options;
  options.add_options()(
      "reduce-bucket-size", po::value(&request.reduce_bucket_size),
      "zero2, zero3: gradient elements per reduce-scatter bucket, reduced as the backward completes it "
      "(default 500000000, DeepSpeed's reduce_bucket_size)")(
      "overlap-comm", po::value(&request.overlap_comm),
      "zero2, zero3: on, the bucket reduce-scatters run on the communication stream while the backward goes "
      "on; off, the program waits for each (default: DeepSpeed's, on for zero3, off for zero2)")(
      "prefetch-depth", po::value(&request.prefetch_depth),
      "zero3: units (layers) whose all-gather starts ahead of their use, overlapping the current unit's "
      "compute; 0: none (default 1, FSDP's forward and backward prefetch)")(
      "prefetch-bucket-size", po::value(&request.prefetch_bucket_size),
      "zero3: a further unit is prefetched only while fewer parameter elements than this are in flight "
      "(default 50000000, DeepSpeed's stage3_prefetch_bucket_size)")(
      "max-live-parameters", po::value(&request.max_live_parameters),
      "zero3: prefetching stops where the gathered parameter elements, the unit in use included, would "
      "exceed this (default 1000000000, DeepSpeed's stage3_max_live_parameters)")(
      "wrap-units", po::value(&request.wrap_units),
      "zero3: fetch units (layers) per FSDP wrap unit, gathered as one all-gather and kept while the pass "
      "works on them; 0: the whole model as one unit, FSDP's default without an auto_wrap_policy (default 1, "
      "one per layer, as transformer_auto_wrap_policy)")(
      "no-sync", po::value(&request.no_sync),
      "zero2, zero3 with --micro-batches: on, the micro-batches before the last only accumulate full-size "
      "gradients and the last one's backward reduce-scatters their sum (FSDP's no_sync); off, every "
      "micro-batch's backward reduce-scatters its own and each device sums its shards (default off, as "
      "DeepSpeed and FSDP outside no_sync)");
}

models::ZeroOptions parse_zero_options(const ZeroRequest& request,
                                       const std::vector<models::Strategy>& strategies) {
  using models::Strategy;
  const auto uses = [&](std::initializer_list<Strategy> which) {
    return std::any_of(strategies.begin(), strategies.end(),
                       [&](Strategy s) { return std::find(which.begin(), which.end(), s) != which.end(); });
  };
  const auto for_strategies = [&](const std::string& text, std::string_view option,
                                  std::initializer_list<Strategy> which, std::string_view names) {
    if (!text.empty() && !uses(which))
      throw UsageError(fmt::format("--{} applies to --strategy {} only", option, names));
    return !text.empty();
  };
  constexpr std::int64_t kMaxElements = 1'000'000'000'000'000;
  models::ZeroOptions zero;
  if (for_strategies(request.reduce_bucket_size, "reduce-bucket-size", {Strategy::zero2, Strategy::zero3},
                     "zero2 or zero3"))
    zero.reduce_bucket_elements =
        parse_count(request.reduce_bucket_size, "--reduce-bucket-size", 1, kMaxElements);
  if (for_strategies(request.overlap_comm, "overlap-comm", {Strategy::zero2, Strategy::zero3},
                     "zero2 or zero3")) {
    if (request.overlap_comm != "on" && request.overlap_comm != "off")
      throw UsageError(fmt::format("--overlap-comm must be on or off (got '{}')", request.overlap_comm));
    zero.overlap_comm = request.overlap_comm == "on";
  }
  if (for_strategies(request.prefetch_depth, "prefetch-depth", {Strategy::zero3}, "zero3"))
    zero.prefetch_units = static_cast<int>(parse_count(request.prefetch_depth, "--prefetch-depth", 0, 1024));
  if (for_strategies(request.prefetch_bucket_size, "prefetch-bucket-size", {Strategy::zero3}, "zero3"))
    zero.prefetch_elements =
        parse_count(request.prefetch_bucket_size, "--prefetch-bucket-size", 0, kMaxElements);
  if (for_strategies(request.max_live_parameters, "max-live-parameters", {Strategy::zero3}, "zero3"))
    zero.max_live_elements =
        parse_count(request.max_live_parameters, "--max-live-parameters", 1, kMaxElements);
  if (for_strategies(request.wrap_units, "wrap-units", {Strategy::zero3}, "zero3"))
    zero.wrap_units = static_cast<int>(parse_count(request.wrap_units, "--wrap-units", 0));
  if (for_strategies(request.no_sync, "no-sync", {Strategy::zero2, Strategy::zero3}, "zero2 or zero3"))
    zero.no_sync = parse_on_off(request.no_sync, "--no-sync");
  return zero;
}

int parse_jobs(const std::string& text) {
  return text.empty() ? 0 : static_cast<int>(parse_count(text, "--jobs", 1, 1024));
}

}  // namespace spmdsim::cli
