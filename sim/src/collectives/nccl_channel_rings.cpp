// The rings of NCCL's channels over a group shaped {devices per node, nodes...} (dimension 0 varying
// fastest), as NCCL lays them on rail-optimised clusters (graph/search.cc: "NET n -> GPU a -> GPU b -> .. ->
// GPU x -> NET n"; each channel's search starts at another NIC, graph->inter[2c] and [2c+1]): channel c
// enters every node at local device e = c mod d, the device beside NIC e, walks the node along a Hamiltonian
// cycle of its own and leaves it from the device before e, whose message to the next node's device e goes
// out through NIC e (the platform routes it over the node fabric to device e first: NCCL's PXN), or, where
// RCCL keeps PXN off (topologies::library_cluster_spec), out through its own NIC and over a spine to rail e.
// So channels 0..d-1 cross nodes on d different NICs.
//
// The cycles inside a node are arc-disjoint, so that on a full-mesh node (MI300X) the channels drive
// different links, as RCCL spreads its channels over all xGMI links: a decomposition of the node's complete
// digraph into d-1 Hamiltonian cycles, found by backtracking (d = 8: 7 cycles, every link of a device), or
// where none exists (d = 4 and 6) as many as there are (2 of 3, 4 of 5). Channel c takes cycle c mod K. On a
// switch the choice costs nothing; above 16 devices per node the cycles are the strides prime to d
// (a -> a+s), found without search.
//
//   d = 4, 2 nodes, channel 1 (cycle 0 3 2 1 from 1):   n0.1 -> n0.0 -> n0.3 -> n0.2 ~NIC1~> n1.1 -> n1.0 ->
//   ...
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_net_graph.hpp"

namespace spmdsim::collectives {
namespace {

constexpr int kSearchedNodeSize = 16;

// The arcs of the complete digraph on d vertices, marked as the cycles found take them.
class Arcs {
 public:
  explicit Arcs(int d) : d_(d), used_(static_cast<std::size_t>(d * d), false) {}
  bool used(int from, int to) const { return used_[index(from, to)]; }
  void mark(const std::vector<int>& cycle, bool used) {
    for (std::size_t i = 0; i < cycle.size(); ++i) used_[index(cycle[i], cycle[(i + 1) % cycle.size()])] = used;
  }

 private:
  std::size_t index(int from, int to) const { return static_cast<std::size_t>(from * d_ + to); }
  int d_;
  std::vector<bool> used_;
};

// Depth-first search for Hamiltonian cycles from vertex 0 over the free arcs, the lowest vertex first: calls
// `found` on each until it returns true (then returns true), and gives up once `budget` vertices were tried.
bool each_cycle(int d, const Arcs& arcs, std::vector<int>& path, std::vector<bool>& on, long& budget,
                const std::function<bool(const std::vector<int>&)>& found) {
  if (static_cast<int>(path.size()) == d) return !arcs.used(path.back(), path.front()) && found(path);
  for (int v = 0; v < d && budget > 0; ++v) {
    if (on[static_cast<std::size_t>(v)] || arcs.used(path.back(), v)) continue;
    --budget;
    path.push_back(v);
    on[static_cast<std::size_t>(v)] = true;
    if (each_cycle(d, arcs, path, on, budget, found)) return true;
    path.pop_back();
    on[static_cast<std::size_t>(v)] = false;
  }
  return false;
}

bool each_cycle(int d, const Arcs& arcs, long& budget, const std::function<bool(const std::vector<int>&)>& found) {
  std::vector<int> path{0};
  std::vector<bool> on(static_cast<std::size_t>(d), false);
  on[0] = true;
  return each_cycle(d, arcs, path, on, budget, found);
}

// Adds `wanted` more cycles to `cycles`, backtracking over the choice of each: true once they are found.
bool complete_decomposition(int d, int wanted, Arcs& arcs, std::vector<std::vector<int>>& cycles, long& budget) {
  if (wanted == 0) return true;
  return each_cycle(d, arcs, budget, [&](const std::vector<int>& cycle) {
    arcs.mark(cycle, true);
    cycles.push_back(cycle);
    if (complete_decomposition(d, wanted - 1, arcs, cycles, budget)) return true;
    cycles.pop_back();
    arcs.mark(cycle, false);
    return false;
  });
}

// Arc-disjoint Hamiltonian cycles of the complete digraph on d vertices: the d-1 of a decomposition, which
// exists for every d but 4 and 6 (Tillson 1980) and which backtracking finds in at most ~10^5 steps up to
// d = 16; for 4 and 6, as many as taking the first cycle left each time gives (2 and 4, the most there are).
std::vector<std::vector<int>> searched_cycles(int d) {
  constexpr long kBudget = 10'000'000;
  long budget = kBudget;
  Arcs arcs(d);
  std::vector<std::vector<int>> cycles;
  if (complete_decomposition(d, std::max(1, d - 1), arcs, cycles, budget)) return cycles;
  Arcs greedy(d);
  cycles.clear();
  budget = kBudget;
  while (each_cycle(d, greedy, budget, [&](const std::vector<int>& cycle) {
    greedy.mark(cycle, true);
    cycles.push_back(cycle);
    return true;
  })) {
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

int mesh_ring_channels(int devices_per_node, int nodes) {
  // NCCL's MAXCHANNELS (src/include/device.h); RCCL's is 128, but across nodes it keeps to 64 (connect.cc).
  constexpr int kMaxChannels = 64;
  const int cycles = std::min(kMaxChannels, static_cast<int>(collectives::node_cycles(devices_per_node).size()));
  if (nodes <= 1) return cycles;
  const int balanced = std::lcm(devices_per_node, cycles);
  return balanced <= kMaxChannels ? balanced : devices_per_node;
}

int default_ring_channels(const NcclNode* nccl, bool full_mesh_nodes, int devices_per_node, int nodes) {
  if (nccl != nullptr) return collectives::nccl_comm_channels(*nccl, devices_per_node, nodes);
  if (full_mesh_nodes) return mesh_ring_channels(devices_per_node, nodes);
  return nodes > 1 ? devices_per_node : 1;
}

int group_ring_channels(const Platform& platform, const std::vector<int>& dimensions) {
  const bool across_nodes = dimensions.size() >= 2 && dimensions.front() > 1;
  const auto node_size = platform.dimensions.size() >= 2 ? platform.dimensions.front()
                                                         : static_cast<int>(platform.devices.size());
  // A group's devices per node are on a node's mesh when it spans nodes or stays inside one.
  const bool on_mesh = platform.full_mesh_nodes && (across_nodes || dimensions.front() <= node_size);
  return default_ring_channels(platform.nccl ? &*platform.nccl : nullptr, on_mesh, dimensions.front(),
                               across_nodes ? collectives::group_nodes(dimensions) : 1);
}

}  // namespace spmdsim
