#include "common/training_options.hpp"

#include <string_view>
#include <vector>

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

}  // namespace spmdsim::cli
