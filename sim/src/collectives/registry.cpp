// The table of algorithms: adding one means its file, a row here and a line in sim/CMakeLists.txt.
#include <array>
#include <string>

#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

using namespace collectives;

constexpr std::array kAllReduce{
    Algorithm<AllReduceFn>{"ring", "ring reduce-scatter then ring all-gather (bandwidth-optimal)",
                           &ring_all_reduce},
};
constexpr std::array kAllGather{
    Algorithm<AllGatherFn>{"ring", "p-1 neighbour steps, one piece each", &ring_all_gather},
};
constexpr std::array kReduceScatter{
    Algorithm<ReduceScatterFn>{"ring", "p-1 neighbour steps, folding one block each", &ring_reduce_scatter},
};
constexpr std::array kAllToAll{
    Algorithm<AllToAllFn>{"pairwise", "p-1 steps, rank r exchanges with r+s and r-s", &pairwise_all_to_all},
};

constexpr std::array<std::string_view, 4> kKindNames{"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};

template <class Fn>
std::vector<std::string_view> names_of(std::span<const Algorithm<Fn>> table) {
  std::vector<std::string_view> names;
  for (const auto& a : table) names.push_back(a.name);
  return names;
}

template <class Fn>
const Algorithm<Fn>& find_in(std::span<const Algorithm<Fn>> table, CollectiveKind kind, std::string_view name) {
  for (const auto& a : table)
    if (a.name == name) return a;
  throw ValueError(fmt::format("unknown {} algorithm '{}'; valid: {}", collective_kind_name(kind), name,
                               fmt::join(names_of(table), ", ")));
}

}  // namespace

std::string_view collective_kind_name(CollectiveKind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }

CollectiveKind parse_collective_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<CollectiveKind>(i);
  throw ValueError(fmt::format("unknown collective '{}'; valid: {}", name, fmt::join(kKindNames, ", ")));
}

std::span<const Algorithm<AllReduceFn>> all_reduce_algorithms() { return kAllReduce; }
std::span<const Algorithm<AllGatherFn>> all_gather_algorithms() { return kAllGather; }
std::span<const Algorithm<ReduceScatterFn>> reduce_scatter_algorithms() { return kReduceScatter; }
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms() { return kAllToAll; }

std::vector<std::string_view> algorithm_names(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return names_of(all_reduce_algorithms());
    case CollectiveKind::all_gather: return names_of(all_gather_algorithms());
    case CollectiveKind::reduce_scatter: return names_of(reduce_scatter_algorithms());
    case CollectiveKind::all_to_all: return names_of(all_to_all_algorithms());
  }
  return {};
}

std::string_view default_algorithm(CollectiveKind kind) {
  return kind == CollectiveKind::all_to_all ? "pairwise" : "ring";
}

void check_algorithm(CollectiveKind kind, std::string_view name) {
  switch (kind) {
    case CollectiveKind::all_reduce: find_all_reduce(name); break;
    case CollectiveKind::all_gather: find_all_gather(name); break;
    case CollectiveKind::reduce_scatter: find_reduce_scatter(name); break;
    case CollectiveKind::all_to_all: find_all_to_all(name); break;
  }
}

const Algorithm<AllReduceFn>& find_all_reduce(std::string_view name) {
  return find_in(all_reduce_algorithms(), CollectiveKind::all_reduce, name);
}
const Algorithm<AllGatherFn>& find_all_gather(std::string_view name) {
  return find_in(all_gather_algorithms(), CollectiveKind::all_gather, name);
}
const Algorithm<ReduceScatterFn>& find_reduce_scatter(std::string_view name) {
  return find_in(reduce_scatter_algorithms(), CollectiveKind::reduce_scatter, name);
}
const Algorithm<AllToAllFn>& find_all_to_all(std::string_view name) {
  return find_in(all_to_all_algorithms(), CollectiveKind::all_to_all, name);
}

}  // namespace spmdsim
