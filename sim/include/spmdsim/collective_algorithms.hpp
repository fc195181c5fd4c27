// Collective algorithms: one file each (sim/src/collectives/), one signature per collective kind, all
// registered by name with a one-line description in sim/src/collectives/registry.cpp. An algorithm is
// straight-line code over the few verbs of Communicator; it never sees hosts or links.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/array.hpp"

namespace spmdsim {

enum class ReduceOp { sum, max, min };

// One device's end of a collective over a group of devices, ranks 0..size()-1 in group order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts sending chunk to peer; the collective does not end before the send has completed.
  virtual void send(int peer, const Array& chunk) = 0;
  virtual Array recv(int peer) = 0;
  // Sends to `to` and receives from `from` at the same time (both transfers posted before waiting).
  virtual Array sendrecv(int to, const Array& chunk, int from) = 0;
  // a op b elementwise, taking this device's time for it (the gamma term of the cost model).
  virtual Array combine(const Array& a, const Array& b, ReduceOp op) = 0;
};

// The collective kinds an algorithm can implement, with the JAX primitives they serve.
enum class CollectiveKind {
  all_reduce,      // psum, pmean, pmax, pmin: a flat array in, the reduced flat array out
  all_gather,      // all_gather: my piece in, every rank's piece out (rank order)
  reduce_scatter,  // psum_scatter: size() blocks in, my reduced block out
  all_to_all,      // all_to_all: block j for rank j in, block from rank j at j out
};
std::string_view collective_kind_name(CollectiveKind kind);
// Accepts the names collective_kind_name gives; throws ValueError listing them otherwise.
CollectiveKind parse_collective_kind(std::string_view name);

using AllReduceFn = Array (*)(Communicator&, const Array& flat, ReduceOp);
using AllGatherFn = std::vector<Array> (*)(Communicator&, const Array& mine);
using ReduceScatterFn = Array (*)(Communicator&, const std::vector<Array>& blocks, ReduceOp);
using AllToAllFn = std::vector<Array> (*)(Communicator&, const std::vector<Array>& blocks);

template <class Fn>
struct Algorithm {
  std::string_view name;
  std::string_view description;
  Fn run;
};

std::span<const Algorithm<AllReduceFn>> all_reduce_algorithms();
std::span<const Algorithm<AllGatherFn>> all_gather_algorithms();
std::span<const Algorithm<ReduceScatterFn>> reduce_scatter_algorithms();
std::span<const Algorithm<AllToAllFn>> all_to_all_algorithms();

// The algorithm names of a kind, in registry order.
std::vector<std::string_view> algorithm_names(CollectiveKind kind);
// The default algorithm of a kind (ring for reductions and all-gather, pairwise for all-to-all).
std::string_view default_algorithm(CollectiveKind kind);
// Throws ValueError "unknown all_reduce algorithm 'x'; valid: ring, ..." for a name not registered.
void check_algorithm(CollectiveKind kind, std::string_view name);

const Algorithm<AllReduceFn>& find_all_reduce(std::string_view name);
const Algorithm<AllGatherFn>& find_all_gather(std::string_view name);
const Algorithm<ReduceScatterFn>& find_reduce_scatter(std::string_view name);
const Algorithm<AllToAllFn>& find_all_to_all(std::string_view name);

}  // namespace spmdsim
