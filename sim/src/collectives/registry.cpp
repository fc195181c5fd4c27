// The table of algorithms: adding one means its file, a row here and a line in sim/CMakeLists.txt.
#include <array>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/algorithms.hpp"
#include "collectives/booked_ring.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

using namespace collectives;

constexpr std::string_view kAnyCount = "any number of devices";

constexpr std::array kAllReduce{
    AllReduceAlgorithm{"ring", "ring reduce-scatter then ring all-gather (bandwidth-optimal)",
                       &ring_all_reduce, &ring_all_reduce_cost, &any_count, kAnyCount,
                       /*platform_bound=*/false, &booked_ring_all_reduce},
    AllReduceAlgorithm{"recursive_doubling", "lg p exchanges of the whole vector with r xor 2^k",
                       &recursive_doubling_all_reduce, &recursive_doubling_all_reduce_cost, &any_count,
                       kAnyCount},
    AllReduceAlgorithm{"rabenseifner", "recursive-halving reduce-scatter, recursive-doubling all-gather",
                       &rabenseifner_all_reduce, &rabenseifner_all_reduce_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"binomial", "binomial reduce to rank 0, then binomial broadcast", &binomial_all_reduce,
                       &binomial_all_reduce_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"double_binary_tree", "NCCL's two complementary trees, half the vector each",
                       &double_binary_tree_all_reduce, &double_binary_tree_all_reduce_unpipelined_cost,
                       &any_count, kAnyCount},
    AllReduceAlgorithm{"direct", "pairwise-exchange reduce-scatter, then every shard to every rank",
                       &direct_all_reduce, &direct_all_reduce_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"hierarchical", "reduce-scatter in dimension 0, all-reduce across, all-gather",
                       &hierarchical_all_reduce, &hierarchical_all_reduce_flat_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"multidim", "along each dimension its reduce-scatter, then all-gathers back",
                       &multidim_all_reduce, &multidim_all_reduce_flat_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"torus", "a part per dimension and way at once, each multidim's rings from its own",
                       &torus_all_reduce, &ring_all_reduce_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"nccl_ring", "NCCL's rings: one ring per channel, each crossing nodes on its own NIC",
                       &nccl_ring_all_reduce, &ring_all_reduce_cost, &any_count, kAnyCount},
    AllReduceAlgorithm{"nvls", "NVLink SHARP: the node's switch reduces and multicasts (one node)",
                       &nvls_all_reduce, &nvls_all_reduce_cost, &any_count, kAnyCount,
                       /*platform_bound=*/true},
    AllReduceAlgorithm{"nccl_tree",
                       "NCCL's Tree: a chain through each node, a double binary tree of the nodes",
                       &nccl_tree_all_reduce, &double_binary_tree_all_reduce_unpipelined_cost, &any_count,
                       kAnyCount, /*platform_bound=*/true},
    AllReduceAlgorithm{"nvls_tree",
                       "NVLSTree: each node's switch reduces, a double binary tree of the nodes across them",
                       &nvls_tree_all_reduce, &nvls_all_reduce_cost, &any_count, kAnyCount,
                       /*platform_bound=*/true},
    AllReduceAlgorithm{"nccl",
                       "what NCCL's tuner picks (nccl_ring, nccl_tree, nvls, nvls_tree) or RCCL runs "
                       "(MSCCL all-pairs, nccl_ring)",
                       &nccl_all_reduce, &ring_all_reduce_cost, &any_count, kAnyCount},
};
constexpr std::array kAllGather{
    AllGatherAlgorithm{"ring", "p-1 neighbour steps, one piece each", &ring_all_gather, &ring_all_gather_cost,
                       &any_count, kAnyCount, /*platform_bound=*/false, &booked_ring_all_gather},
    AllGatherAlgorithm{"recursive_doubling", "lg p exchanges with r xor 2^k, the pieces held doubling",
                       &recursive_doubling_all_gather, &recursive_doubling_all_gather_cost, &power_of_two,
                       "powers of two"},
    AllGatherAlgorithm{"bruck", "ceil(lg p) shifts by 2^k, the pieces held doubling, then a rotation",
                       &bruck_all_gather, &bruck_all_gather_cost, &any_count, kAnyCount},
    AllGatherAlgorithm{"direct", "every piece sent to every rank at once, received one by one",
                       &direct_all_gather, &direct_all_gather_cost, &any_count, kAnyCount},
    AllGatherAlgorithm{"torus", "a part per dimension and way at once, each ring all-gathers from its own",
                       &torus_all_gather, &ring_all_gather_cost, &any_count, kAnyCount},
    AllGatherAlgorithm{"nccl_ring", "NCCL's rings: one ring per channel, each crossing nodes on its own NIC",
                       &nccl_ring_all_gather, &ring_all_gather_cost, &any_count, kAnyCount},
    AllGatherAlgorithm{"nccl", "what NCCL's tuner picks among those modelled: nccl_ring", &nccl_all_gather,
                       &ring_all_gather_cost, &any_count, kAnyCount},
};
constexpr std::array kReduceScatter{
    ReduceScatterAlgorithm{"ring", "p-1 neighbour steps, folding one block each", &ring_reduce_scatter,
                           &ring_reduce_scatter_cost, &any_count, kAnyCount, /*platform_bound=*/false,
                           &booked_ring_reduce_scatter},
    ReduceScatterAlgorithm{"recursive_halving", "lg p exchanges with r xor 2^k, halving the blocks held",
                           &recursive_halving_reduce_scatter, &recursive_halving_reduce_scatter_cost,
                           &power_of_two, "powers of two"},
    ReduceScatterAlgorithm{"pairwise", "p-1 steps, block r+s to r+s, folding the one from r-s",
                           &pairwise_reduce_scatter, &pairwise_reduce_scatter_cost, &any_count, kAnyCount},
    ReduceScatterAlgorithm{"direct", "every block sent to its rank at once, received one by one, reduced",
                           &direct_reduce_scatter, &direct_reduce_scatter_cost, &any_count, kAnyCount},
    ReduceScatterAlgorithm{"torus",
                           "a part per dimension and way at once, each ring reduce-scatters from its own",
                           &torus_reduce_scatter, &ring_reduce_scatter_cost, &any_count, kAnyCount},
    ReduceScatterAlgorithm{"nccl_ring",
                           "NCCL's rings: one ring per channel, each crossing nodes on its own NIC",
                           &nccl_ring_reduce_scatter, &ring_reduce_scatter_cost, &any_count, kAnyCount},
    ReduceScatterAlgorithm{"nccl", "what NCCL's tuner picks among those modelled: nccl_ring",
                           &nccl_reduce_scatter, &ring_reduce_scatter_cost, &any_count, kAnyCount},
};
constexpr std::array kAllToAll{
    Algorithm<AllToAllFn>{"pairwise", "p-1 steps, rank r exchanges with r+s and r-s", &pairwise_all_to_all,
                          &pairwise_all_to_all_cost, &any_count, kAnyCount},
    Algorithm<AllToAllFn>{"bruck",
                          "ceil(lg p) shifts by 2^k, each moving the blocks whose distance has bit k",
                          &bruck_all_to_all, &bruck_all_to_all_cost, &any_count, kAnyCount},
    Algorithm<AllToAllFn>{"direct", "every block sent to its rank at once, received one by one",
                          &direct_all_to_all, &direct_all_to_all_cost, &any_count, kAnyCount},
};
constexpr std::array kBroadcast{
    Algorithm<BroadcastFn>{"binomial", "binomial tree from the root, ceil(lg p) rounds", &binomial_broadcast,
                           &binomial_broadcast_cost, &any_count, kAnyCount},
    Algorithm<BroadcastFn>{"chain", "pipelined chain root -> root+1 -> ..., pipeline_chunks pieces",
                           &chain_broadcast, &chain_broadcast_unpipelined_cost, &any_count, kAnyCount},
};
constexpr std::array kReduce{
    Algorithm<ReduceFn>{"binomial", "binomial tree to the root, ceil(lg p) rounds", &binomial_reduce,
                        &binomial_reduce_cost, &any_count, kAnyCount},
    Algorithm<ReduceFn>{"chain", "pipelined chain root-1 -> root-2 -> ... -> root, pipeline_chunks pieces",
                        &chain_reduce, &chain_reduce_unpipelined_cost, &any_count, kAnyCount},
};

constexpr std::array<std::string_view, 6> kKindNames{"all_reduce", "all_gather", "reduce_scatter",
                                                     "all_to_all", "broadcast",  "reduce"};

// Calls fn with the table of `kind`.
template <class Fn>
decltype(auto) with_table(CollectiveKind kind, Fn&& fn) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return fn(std::span<const AllReduceAlgorithm>(kAllReduce));
    case CollectiveKind::all_gather:
      return fn(std::span<const AllGatherAlgorithm>(kAllGather));
    case CollectiveKind::reduce_scatter:
      return fn(std::span<const ReduceScatterAlgorithm>(kReduceScatter));
    case CollectiveKind::all_to_all:
      return fn(std::span<const Algorithm<AllToAllFn>>(kAllToAll));
    case CollectiveKind::broadcast:
      return fn(std::span<const Algorithm<BroadcastFn>>(kBroadcast));
    case CollectiveKind::reduce:
      return fn(std::span<const Algorithm<ReduceFn>>(kReduce));
  }
  throw std::logic_error("unreachable collective kind");
}

template <class AlgorithmT>
std::vector<std::string_view> names_of(std::span<const AlgorithmT> table) {
  std::vector<std::string_view> names;
  for (const auto& a : table) names.push_back(a.name);
  return names;
}

template <class AlgorithmT>
const AlgorithmT& find_in(std::span<const AlgorithmT> table, CollectiveKind kind, std::string_view name) {
  for (const auto& a : table)
    if (a.name == name) return a;
  throw ValueError(fmt::format("unknown {} algorithm '{}'; valid: {}", collective_kind_name(kind), name,
                               fmt::join(names_of(table), ", ")));
}

}  // namespace

std::string_view collective_kind_name(CollectiveKind kind) {
  return kKindNames[static_cast<std::size_t>(kind)];
}

CollectiveKind parse_collective_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<CollectiveKind>(i);
  throw ValueError(fmt::format("unknown collective '{}'; valid: {}", name, fmt::join(kKindNames, ", ")));
}

std::span<const AllReduceAlgorithm> all_reduce_algorithms() {
  return kAllReduce;
}
std::span<const AllGatherAlgorithm> all_gather_algorithms() {
  return kAllGather;
}
std::span<const ReduceScatterAlgorithm> reduce_scatter_algorithms() {
  return kReduceScatter;
}
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms() {
  return kAllToAll;
}
std::span<const Algorithm<BroadcastFn>> broadcast_algorithms() {
  return kBroadcast;
}
std::span<const Algorithm<ReduceFn>> reduce_algorithms() {
  return kReduce;
}

std::vector<std::string_view> algorithm_names(CollectiveKind kind) {
  return with_table(kind, [](auto table) { return names_of(table); });
}

CollectiveLibrary collective_library(const Platform& platform) {
  if (platform.nccl) return CollectiveLibrary::nccl;
  if (platform.rccl) return CollectiveLibrary::rccl;
  if (platform.full_mesh_nodes) return CollectiveLibrary::mesh_channel_rings;
  return platform.torus ? CollectiveLibrary::torus_rings : CollectiveLibrary::textbook;
}

std::string_view default_algorithm(CollectiveKind kind, CollectiveLibrary library) {
  const bool channel_ring_kind = kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
                                 kind == CollectiveKind::reduce_scatter;
  if (!channel_ring_kind) return default_algorithm(kind);
  switch (library) {
    case CollectiveLibrary::nccl:
    case CollectiveLibrary::rccl:
      return "nccl";
    case CollectiveLibrary::mesh_channel_rings:
      return "nccl_ring";
    case CollectiveLibrary::torus_rings:
      return "torus";
    case CollectiveLibrary::textbook:
      break;
  }
  return default_algorithm(kind);
}

std::string_view default_algorithm(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_to_all:
      return "pairwise";
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      return "binomial";
    default:
      return "ring";
  }
}

void check_algorithm(CollectiveKind kind, std::string_view name) {
  with_table(kind, [&](auto table) { find_in(table, kind, name); });
}

void check_device_count(CollectiveKind kind, std::string_view name, int p) {
  with_table(kind, [&](auto table) {
    const auto& algorithm = find_in(table, kind, name);
    if (!algorithm.accepts(p))
      throw ValueError(fmt::format("{} algorithm '{}' runs on {}, not on {} devices",
                                   collective_kind_name(kind), name, algorithm.accepted_counts, p));
  });
}

const AllReduceAlgorithm& find_all_reduce(std::string_view name) {
  return find_in(all_reduce_algorithms(), CollectiveKind::all_reduce, name);
}
const AllGatherAlgorithm& find_all_gather(std::string_view name) {
  return find_in(all_gather_algorithms(), CollectiveKind::all_gather, name);
}
const ReduceScatterAlgorithm& find_reduce_scatter(std::string_view name) {
  return find_in(reduce_scatter_algorithms(), CollectiveKind::reduce_scatter, name);
}
const Algorithm<AllToAllFn>& find_all_to_all(std::string_view name) {
  return find_in(all_to_all_algorithms(), CollectiveKind::all_to_all, name);
}
const Algorithm<BroadcastFn>& find_broadcast(std::string_view name) {
  return find_in(broadcast_algorithms(), CollectiveKind::broadcast, name);
}
const Algorithm<ReduceFn>& find_reduce(std::string_view name) {
  return find_in(reduce_algorithms(), CollectiveKind::reduce, name);
}

}  // namespace spmdsim
