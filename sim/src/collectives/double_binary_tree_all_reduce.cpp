// Double-binary-tree all-reduce in NCCL's style: half of the vector is reduced up NCCL's binary tree and
// broadcast back down it, the other half up and down the complementary tree (ncclGetDtree: the mirror
// image for even p, the tree shifted by one rank for odd p), each half cut into k = comm.pipeline_chunks()
// pieces that are pipelined through the tree; first every piece goes up (NCCL runTreeUpDown's reduce loop),
// then every piece comes down (its broadcast loop).
//
//   p = 8:   tree 0          tree 1 (mirror)      each rank is inner in one tree and a leaf in the other,
//            0                       7            so both trees together give every rank about the same
//            4                       3            traffic: per piece pair it receives two and sends two
//          2   6                   5   1
//         1 3 5 7                 6 4 2 0
//
// Schedule. Time runs in slots, each one message of one piece (n/(2k) bytes) per busy device: the edges of
// both trees are coloured so that no rank sends two or receives two messages of one colour (a proper edge
// colouring of the bipartite sender/receiver graph; two colours for every p tried, from 2 to 4096). A
// period has one slot per colour. Going up, the edge above a rank of height h (leaves: 0) in its tree
// carries piece c in period c + h; coming down, the edge below a rank of depth d (root: 0) carries piece c
// in period c + d of the second phase. Every device works through its own messages in slot order, which
// cannot deadlock; a device that only sends in a slot waits for the receiver's zero-byte credit, so that it
// never has two pieces in flight on its link (a blocking send, as MPICH's tree algorithms use).
//
// Cost (derived for this construction, p = 2^m, T = alpha + (n/(2k)) beta, g = (n/(2k)) gamma; the tests
// check it exactly against the simulation for p = 2, 4, 8, 16 and k = 1..5, with and without gamma):
//   p = 2:   2k T + k g  (one colour: k exchanging slots up, k down)
//   p >= 4:  2 (2(k + m) - 3) T + (2(k + m) - 3) g
// Going up, the last piece leaves the leaves in period k-1 (slots 2(k-1), 2(k-1)+1), climbs one level per
// period to the root's child (height m-1), which has it after 2(k-1) + 2(m-1) slots and hands it to the root
// in the next slot: 2(k + m) - 3 slots; each is followed by a reduction on the critical path (g). The way
// down mirrors the way up: 2(k + m) - 3 slots. For other p the trees are uneven and the formula (with
// m = ceil(lg p)) is only an estimate. The registry row has no k and prices k = 1, the simulation's default.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {
namespace {

// ncclGetBtree (NVIDIA/nccl src/graph/trees.cc): rank 0 is the root with the single child 2^(ceil lg p - 1);
// a rank whose lowest set bit is b has the parent (rank ^ b) | 2b (or rank ^ b when that is out of range)
// and the children rank - b/2 and the largest rank + b/2, + b/4, ... that is in range.
//
//   p = 14:   0---------------8
//                      ______/ \______
//                     4               12
//                   /   \            /  |
//                 2       6       10    |
//                / \     / \     /  \   |
//               1   3   5   7   9   11  13
BinaryTreeLinks nccl_binary_tree(int p, int rank) {
  BinaryTreeLinks links;
  int bit = 1;
  while (bit < p && (bit & rank) == 0) bit <<= 1;
  if (rank == 0) {
    if (p > 1) links.children.push_back(bit >> 1);
    return links;
  }
  links.parent = (rank ^ bit) | (bit << 1);
  if (links.parent >= p) links.parent = rank ^ bit;
  int low = bit >> 1;
  if (low == 0) return links;
  links.children.push_back(rank - low);
  while (low > 0 && rank + low >= p) low >>= 1;
  if (low > 0) links.children.push_back(rank + low);
  return links;
}

DoubleTreeSchedule build_schedule(int p) {
  DoubleTreeSchedule schedule;
  schedule.p = p;
  std::array<std::vector<BinaryTreeLinks>, 2> trees;
  for (int r = 0; r < p; ++r) {
    const auto both = nccl_double_binary_tree(p, r);
    for (std::size_t t = 0; t < 2; ++t) trees[t].push_back(both[t]);
  }
  // Heights (leaves 0) and depths (roots 0) in each tree.
  std::array<std::vector<int>, 2> height, depth;
  for (int t = 0; t < 2; ++t) {
    height[t].assign(static_cast<std::size_t>(p), 0);
    depth[t].assign(static_cast<std::size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      int d = 0;
      for (int up = trees[t][r].parent, h = 1; up >= 0; up = trees[t][up].parent, ++h, ++d)
        height[t][up] = std::max(height[t][up], h);
      depth[t][r] = d;
    }
  }
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < p; ++r)
      if (trees[t][r].parent >= 0)
        schedule.edges.push_back({r, trees[t][r].parent, t, height[t][r], depth[t][trees[t][r].parent], -1});

  // Proper edge colouring of the bipartite multigraph (senders | receivers) with as many colours as its
  // largest degree (Koenig): give each edge a colour free at both ends, or swap an alternating path.
  std::vector<int> out_degree(static_cast<std::size_t>(p), 0), in_degree(static_cast<std::size_t>(p), 0);
  for (const auto& e : schedule.edges) {
    ++out_degree[e.child];
    ++in_degree[e.parent];
  }
  schedule.colours = 1;
  for (int r = 0; r < p; ++r) schedule.colours = std::max({schedule.colours, out_degree[r], in_degree[r]});
  const int colours = schedule.colours;
  // sending[r * colours + c]: the edge rank r sends on in colour c, or -1; receiving likewise.
  std::vector<int> sending(static_cast<std::size_t>(p * colours), -1), receiving(sending);
  auto at = [colours](std::vector<int>& table, int rank, int colour) -> int& {
    return table[static_cast<std::size_t>(rank * colours + colour)];
  };
  for (int i = 0; i < static_cast<int>(schedule.edges.size()); ++i) {
    auto& edge = schedule.edges[static_cast<std::size_t>(i)];
    int both_free = 0;
    while (both_free < colours &&
           (at(sending, edge.child, both_free) >= 0 || at(receiving, edge.parent, both_free) >= 0))
      ++both_free;
    int free_at_sender = both_free;
    if (both_free == colours) {
      // No colour is free at both ends: take a free at the sender and b free at the receiver, and swap
      // a <-> b along the path that leaves the receiver in colour a; the path cannot reach this edge's
      // sender (the graph is bipartite), so afterwards a is free at both ends.
      free_at_sender = 0;
      int free_at_receiver = 0;
      while (at(sending, edge.child, free_at_sender) >= 0) ++free_at_sender;
      while (at(receiving, edge.parent, free_at_receiver) >= 0) ++free_at_receiver;
      const int a = free_at_sender, b = free_at_receiver;
      std::vector<int> path;
      int rank = edge.parent, colour = a;
      for (bool at_receiver_side = true;;
           at_receiver_side = !at_receiver_side, colour = colour == a ? b : a) {
        const int next = at_receiver_side ? at(receiving, rank, colour) : at(sending, rank, colour);
        if (next < 0) break;
        path.push_back(next);
        const auto& e = schedule.edges[static_cast<std::size_t>(next)];
        rank = at_receiver_side ? e.child : e.parent;
      }
      for (int j : path) {
        const auto& e = schedule.edges[static_cast<std::size_t>(j)];
        at(sending, e.child, e.colour) = -1;
        at(receiving, e.parent, e.colour) = -1;
      }
      for (int j : path) {
        auto& e = schedule.edges[static_cast<std::size_t>(j)];
        e.colour = e.colour == a ? b : a;
        at(sending, e.child, e.colour) = j;
        at(receiving, e.parent, e.colour) = j;
      }
    }
    edge.colour = free_at_sender;
    at(sending, edge.child, edge.colour) = i;
    at(receiving, edge.parent, edge.colour) = i;
  }

  schedule.max_child_height = 0;
  schedule.edges_of.assign(static_cast<std::size_t>(p), {});
  for (int i = 0; i < static_cast<int>(schedule.edges.size()); ++i) {
    const auto& e = schedule.edges[static_cast<std::size_t>(i)];
    schedule.max_child_height = std::max(schedule.max_child_height, e.child_height);
    schedule.edges_of[e.child].push_back(i);
    schedule.edges_of[e.parent].push_back(i);
  }
  return schedule;
}

// One message of a device's part of the schedule.
struct TreeMessage {
  int peer;
  int tree;
  int chunk;
  bool up;  // a partial sum going up (reduced on arrival) or a result coming down
};

struct Slot {
  std::optional<TreeMessage> send, recv;
};

}  // namespace

std::vector<BinaryTreeLinks> nccl_double_binary_tree(int p, int rank) {
  std::vector<BinaryTreeLinks> trees{nccl_binary_tree(p, rank), {}};
  // ncclGetDtree: the mirror image r -> p-1-r for even p, the shift r -> r+1 for odd p.
  const auto to_tree = [p](int r) { return p % 2 == 1 ? (r - 1 + p) % p : p - 1 - r; };
  const auto from_tree = [p](int r) { return r < 0 ? -1 : p % 2 == 1 ? (r + 1) % p : p - 1 - r; };
  const BinaryTreeLinks moved = nccl_binary_tree(p, to_tree(rank));
  trees[1].parent = from_tree(moved.parent);
  for (int child : moved.children) trees[1].children.push_back(from_tree(child));
  return trees;
}

const DoubleTreeSchedule& double_tree_schedule(int p) {
  // Every device of a call asks for the same schedule: build it once per p.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<const DoubleTreeSchedule>> cache;
  const std::lock_guard lock(mutex);
  auto& entry = cache[p];
  if (!entry) entry = std::make_unique<const DoubleTreeSchedule>(build_schedule(p));
  return *entry;
}

int DoubleTreeSchedule::up_slot(const DoubleTreeEdge& e, int chunk) const {
  return colours * (chunk + e.child_height) + e.colour;
}

int DoubleTreeSchedule::down_slot(const DoubleTreeEdge& e, int chunk, int chunks) const {
  return colours * (chunks + max_child_height) + colours * (chunk + e.parent_depth) + e.colour;
}

bool DoubleTreeSchedule::receives_at(int rank, int slot, int chunks) const {
  for (int i : edges_of[static_cast<std::size_t>(rank)]) {
    const auto& e = edges[static_cast<std::size_t>(i)];
    for (int c = 0; c < chunks; ++c)
      if ((e.parent == rank && up_slot(e, c) == slot) || (e.child == rank && down_slot(e, c, chunks) == slot))
        return true;
  }
  return false;
}

Array double_binary_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  const int p = comm.size();
  const int r = comm.rank();
  if (p == 1) return flat;
  const int k = std::max(1, comm.pipeline_chunks());
  const DoubleTreeSchedule& schedule = double_tree_schedule(p);

  // This device's messages in slot order.
  std::map<int, Slot> slots;
  for (int i : schedule.edges_of[static_cast<std::size_t>(r)]) {
    const auto& e = schedule.edges[static_cast<std::size_t>(i)];
    for (int c = 0; c < k; ++c) {
      const int up = schedule.up_slot(e, c);
      const int down = schedule.down_slot(e, c, k);
      if (e.child == r) {
        slots[up].send = TreeMessage{e.parent, e.tree, c, true};
        slots[down].recv = TreeMessage{e.parent, e.tree, c, false};
      } else {
        slots[up].recv = TreeMessage{e.child, e.tree, c, true};
        slots[down].send = TreeMessage{e.child, e.tree, c, false};
      }
    }
  }

  const std::vector<Array> halves = split_flat(flat, 2);
  std::array<std::vector<Array>, 2> pieces{split_flat(halves[0], k), split_flat(halves[1], k)};
  const Array credit = Array::zeros(Shape{0}, flat.dtype());
  for (const auto& [slot, step] : slots) {
    // A sender with nothing to receive in this slot waits for this device's credit.
    if (step.recv && !schedule.receives_at(step.recv->peer, slot, k)) comm.send(step.recv->peer, credit);
    std::optional<Array> received;
    if (step.send && step.recv) {
      received = comm.sendrecv(step.send->peer, pieces[step.send->tree][step.send->chunk], step.recv->peer);
    } else if (step.send) {
      // Nothing to receive in this slot: wait for the receiver's credit instead.
      comm.sendrecv(step.send->peer, pieces[step.send->tree][step.send->chunk], step.send->peer);
    } else {
      received = comm.recv(step.recv->peer);
    }
    if (received) {
      Array& piece = pieces[step.recv->tree][step.recv->chunk];
      piece = step.recv->up ? comm.combine(piece, *received, op) : *received;
    }
  }
  return join_flat({join_flat(pieces[0]), join_flat(pieces[1])});
}

double double_binary_tree_all_reduce_cost(const CostInputs& c, int chunks) {
  if (c.p == 1) return 0.0;
  const double piece = c.n / (2.0 * chunks);
  const double slot = c.alpha + piece * c.beta;
  if (c.p == 2) return 2 * chunks * slot + chunks * piece * c.gamma;
  const int phase = 2 * (chunks + ceil_log2(c.p)) - 3;
  return 2 * phase * slot + phase * piece * c.gamma;
}

double double_binary_tree_all_reduce_unpipelined_cost(const CostInputs& c) {
  return double_binary_tree_all_reduce_cost(c, 1);
}

}  // namespace spmdsim::collectives
