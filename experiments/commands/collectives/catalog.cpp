#include "commands/collectives/catalog.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"

namespace spmdsim::cli::collectives {
namespace {

double all_reduce_factor(int n) {
  return 2.0 * (n - 1) / n;
}
double n_minus_one_over_n(int n) {
  return static_cast<double>(n - 1) / n;
}

constexpr Collective kCollectives[] = {
    {CollectiveKind::all_reduce, "all_reduce", "psum", "sum", "2(n-1)/n", &all_reduce_factor},
    {CollectiveKind::all_gather, "all_gather", "all_gather", "none", "(n-1)/n", &n_minus_one_over_n},
    {CollectiveKind::reduce_scatter, "reduce_scatter", "psum_scatter", "sum", "(n-1)/n", &n_minus_one_over_n},
    {CollectiveKind::all_to_all, "all_to_all", "all_to_all", "none", "(n-1)/n", &n_minus_one_over_n},
};

constexpr DType kDTypes[] = {DType::f32, DType::bf16, DType::f16, DType::f64, DType::i32};

}  // namespace

const Collective& find_collective(std::string_view name) {
  for (const auto& c : kCollectives)
    if (c.name == name || c.jax_name == name) return c;
  std::vector<std::string> valid;
  for (const auto& c : kCollectives)
    valid.push_back(c.name == c.jax_name ? std::string(c.name) : fmt::format("{} ({})", c.name, c.jax_name));
  throw UsageError(
      fmt::format("unknown collective '{}' in --collectives; valid: {}", name, fmt::join(valid, ", ")));
}

DType find_dtype(std::string_view name) {
  for (auto d : kDTypes)
    if (dtype_name(d) == name) return d;
  std::vector<std::string_view> valid;
  for (auto d : kDTypes) valid.push_back(dtype_name(d));
  throw UsageError(fmt::format("unknown --dtype '{}'; valid: {}", name, fmt::join(valid, ", ")));
}

std::vector<std::string> algorithms_for(const Collective& c, const std::vector<std::string>& words,
                                        CollectiveLibrary library) {
  const auto registered = algorithm_names(c.kind);
  std::vector<std::string> chosen;
  const auto add = [&](std::string_view name) {
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.emplace_back(name);
  };
  for (const auto& word : words) {
    if (word == "all") {  // those that run on any platform: the platform-bound ones (nvls, ...) are named
      for (auto name : registered)
        if (c.kind != CollectiveKind::all_reduce || !find_all_reduce(name).platform_bound) add(name);
      add("auto");
    } else if (word == "default") {
      add(default_algorithm(c.kind, library));
    } else if (word == "auto" || std::find(registered.begin(), registered.end(), word) != registered.end()) {
      add(word);
    }
  }
  return chosen;
}

std::string valid_algorithms_text(const std::vector<const Collective*>& collectives) {
  std::vector<std::string> per_kind;
  for (const auto* c : collectives)
    per_kind.push_back(fmt::format("{}: {}, auto", c->name, fmt::join(algorithm_names(c->kind), ", ")));
  return fmt::format("{} (or all, default)", fmt::join(per_kind, "; "));
}

}  // namespace spmdsim::cli::collectives
