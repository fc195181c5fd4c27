// The rings of NCCL's channels over a group shaped {devices per node, nodes...} (dimension 0 varying
// fastest), as NCCL lays them on rail-optimised clusters (graph/search.cc: "NET n -> GPU a -> GPU b -> .. ->
// GPU x -> NET n"; each channel's search starts at another NIC, graph->inter[2c] and [2c+1]): channel c
// enters every node at local device e = c mod d, the device beside NIC e, walks the node along a Hamiltonian
// cycle of its own and leaves it from the device before e, whose message to the next node's device e goes
// out through NIC e (the platform routes it over the node fabric to device e first: NCCL's PXN). So channels
// 0..d-1 cross nodes on d different NICs.
//
// The cycles inside a node are arc-disjoint, so that on a full-mesh node (MI300X) the channels drive
// different links, as RCCL spreads its channels over all xGMI links: each is the first cycle a depth-first
// search finds among the arcs the earlier ones left free (d = 8: 6 of the 7 links of a device; d = 4: 2 of
// 3, since no decomposition exists for 4 and 6). Channel c takes cycle c mod K. On a switch the choice costs
// nothing; above 16 devices per node the cycles are the strides prime to d (a -> a+s), found without search.
//
//   d = 4, 2 nodes, channel 1 (cycle 0 3 2 1 from 1):   n0.1 -> n0.0 -> n0.3 -> n0.2 ~NIC1~> n1.1 -> n1.0 ->
//   ...
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <utility>

#include "collectives/algorithms.hpp"

namespace spmdsim::collectives {
namespace {

constexpr int kSearchedNodeSize = 16;

// Extends `path` to a Hamiltonian cycle over arcs not in `used`, trying the lowest vertex first.
bool extend_cycle(int d, const std::set<std::pair<int, int>>& used, std::vector<int>& path,
                  std::vector<bool>& on) {
  if (static_cast<int>(path.size()) == d) return !used.count({path.back(), path.front()});
  for (int v = 0; v < d; ++v) {
    if (on[static_cast<std::size_t>(v)] || used.count({path.back(), v})) continue;
    path.push_back(v);
    on[static_cast<std::size_t>(v)] = true;
    if (extend_cycle(d, used, path, on)) return true;
    path.pop_back();
    on[static_cast<std::size_t>(v)] = false;
  }
  return false;
}

std::vector<std::vector<int>> searched_cycles(int d) {
  std::vector<std::vector<int>> cycles;
  std::set<std::pair<int, int>> used;
  while (static_cast<int>(cycles.size()) < std::max(1, d - 1)) {
    std::vector<int> path{0};
    std::vector<bool> on(static_cast<std::size_t>(d), false);
    on[0] = true;
    if (!extend_cycle(d, used, path, on)) break;
    for (int i = 0; i < d; ++i)
      used.insert({path[static_cast<std::size_t>(i)], path[static_cast<std::size_t>((i + 1) % d)]});
    cycles.push_back(std::move(path));
  }
  return cycles;
}

std::vector<std::vector<int>> stride_cycles(int d) {
  std::vector<std::vector<int>> cycles;
  for (int s = 1; s < d || s == 1; ++s) {
    if (std::gcd(s, d) != 1) continue;
    std::vector<int> cycle;
    for (int k = 0; k < d; ++k) cycle.push_back(k * s % d);
    cycles.push_back(std::move(cycle));
  }
  return cycles;
}

}  // namespace

const std::vector<std::vector<int>>& node_cycles(int d) {
  static std::map<int, std::vector<std::vector<int>>> cache;
  auto it = cache.find(d);
  if (it == cache.end())
    it = cache.emplace(d, d <= kSearchedNodeSize ? searched_cycles(d) : stride_cycles(d)).first;
  return it->second;
}

int group_nodes(const std::vector<int>& dimensions) {
  int nodes = 1;
  for (std::size_t i = 1; i < dimensions.size(); ++i) nodes *= dimensions[i];
  return nodes;
}

int group_size(const std::vector<int>& dimensions) {
  int ranks = 1;
  for (int d : dimensions) ranks *= d;
  return ranks;
}

namespace {

ChannelRings channel_rings(const std::vector<int>& dimensions, int channels) {
  const int d = dimensions.empty() ? 1 : dimensions.front();
  const int nodes = group_nodes(dimensions);
  const auto& cycles = node_cycles(d);
  ChannelRings rings;
  for (int c = 0; c < channels; ++c) {
    const auto& cycle = cycles[static_cast<std::size_t>(c) % cycles.size()];
    const auto entry = std::find(cycle.begin(), cycle.end(), c % d) - cycle.begin();
    std::vector<int> ring;
    for (int n = 0; n < nodes; ++n)
      for (int k = 0; k < d; ++k) ring.push_back(n * d + cycle[static_cast<std::size_t>((entry + k) % d)]);
    rings.push_back(std::move(ring));
  }
  return rings;
}

}  // namespace

std::shared_ptr<const ChannelRings> nccl_channel_rings(const std::vector<int>& dimensions, int channels) {
  static std::map<std::pair<std::vector<int>, int>, std::shared_ptr<const ChannelRings>> cache;
  auto& rings = cache[{dimensions, channels}];
  if (!rings) rings = std::make_shared<const ChannelRings>(channel_rings(dimensions, channels));
  return rings;
}

}  // namespace spmdsim::collectives

namespace spmdsim {

int mesh_ring_channels(int devices_per_node) {
  constexpr int kMaxChannels = 64;  // NCCL's MAXCHANNELS (src/include/device.h), which RCCL shares
  return std::min(kMaxChannels, static_cast<int>(collectives::node_cycles(devices_per_node).size()));
}

}  // namespace spmdsim
