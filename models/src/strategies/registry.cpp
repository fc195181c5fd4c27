// The training strategies by name: what --strategy lists and accepts. Adding one takes its file in this
// folder, its Strategy value (data_parallel.hpp), its maker declared and listed below, and its line in
// models/CMakeLists.txt.
#include "registry.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::models {

std::unique_ptr<TrainingStrategy> make_dp();
std::unique_ptr<TrainingStrategy> make_dp_overlap();
std::unique_ptr<TrainingStrategy> make_zero1();
std::unique_ptr<TrainingStrategy> make_zero2();
std::unique_ptr<TrainingStrategy> make_zero3();

namespace {

struct Entry {
  StrategyInfo info;
  std::unique_ptr<TrainingStrategy> strategy;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = [] {
    std::vector<Entry> out;
    out.push_back(
        {{Strategy::dp, "dp", "replicated params and optimizer state; gradients all-reduced"}, make_dp()});
    out.push_back({{Strategy::dp_overlap, "dp-overlap",
                    "dp with the gradients all-reduced in buckets while the backward runs (PyTorch DDP)"},
                   make_dp_overlap()});
    out.push_back({{Strategy::zero1, "zero1", "ZeRO stage 1: optimizer state sharded"}, make_zero1()});
    out.push_back(
        {{Strategy::zero2, "zero2", "ZeRO stage 2: optimizer state and gradients sharded"}, make_zero2()});
    out.push_back({{Strategy::zero3, "zero3", "ZeRO stage 3: params, optimizer state and gradients sharded"},
                   make_zero3()});
    return out;
  }();
  return table;
}

const Entry& entry(Strategy strategy) {
  const auto& table = entries();
  const auto found = std::find_if(table.begin(), table.end(),
                                  [strategy](const Entry& e) { return e.info.strategy == strategy; });
  if (found == table.end())
    throw ValueError(fmt::format("training strategy {} is not registered", static_cast<int>(strategy)));
  return *found;
}

}  // namespace

const std::vector<StrategyInfo>& training_strategies() {
  static const std::vector<StrategyInfo> infos = [] {
    std::vector<StrategyInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

const TrainingStrategy& training_strategy(Strategy strategy) {
  return *entry(strategy).strategy;
}

std::string_view strategy_name(Strategy strategy) {
  return entry(strategy).info.name;
}

Strategy parse_strategy(std::string_view name) {
  std::vector<std::string_view> names;
  for (const StrategyInfo& info : training_strategies()) {
    if (info.name == name) return info.strategy;
    names.push_back(info.name);
  }
  throw ValueError(fmt::format("unknown training strategy '{}' (valid: {})", name, fmt::join(names, ", ")));
}

double zero_model_state_bytes(Strategy strategy, std::int64_t psi, int num_devices, double p, double g,
                              double k) {
  return training_strategy(strategy).model_state_bytes(static_cast<double>(psi),
                                                       static_cast<double>(num_devices), p, g, k);
}

}  // namespace spmdsim::models
