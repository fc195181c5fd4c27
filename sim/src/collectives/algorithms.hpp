// Every algorithm's entry point and closed-form cost, for the registry (and for algorithms composed of
// others).
#pragma once

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

struct MscclProgram;  // rccl_msccl.hpp

Array ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double ring_all_reduce_cost(const CostInputs& c);
std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine);
// The same for pieces of different sizes: like[i] is shaped as rank i's piece (the chunks split_flat cut).
std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine, const std::vector<Array>& like);
double ring_all_gather_cost(const CostInputs& c);
Array ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double ring_reduce_scatter_cost(const CostInputs& c);
std::vector<Array> pairwise_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double pairwise_all_to_all_cost(const CostInputs& c);
Array binomial_broadcast(Communicator& comm, const Array& flat, int root);
double binomial_broadcast_cost(const CostInputs& c);
Array binomial_reduce(Communicator& comm, const Array& flat, ReduceOp op, int root);
double binomial_reduce_cost(const CostInputs& c);

// all-gather, reduce-scatter and all-to-all algorithms
std::vector<Array> recursive_doubling_all_gather(Communicator& comm, const Array& mine);
double recursive_doubling_all_gather_cost(const CostInputs& c);
std::vector<Array> bruck_all_gather(Communicator& comm, const Array& mine);
double bruck_all_gather_cost(const CostInputs& c);
std::vector<Array> direct_all_gather(Communicator& comm, const Array& mine);
double direct_all_gather_cost(const CostInputs& c);
Array recursive_halving_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double recursive_halving_reduce_scatter_cost(const CostInputs& c);
Array pairwise_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double pairwise_reduce_scatter_cost(const CostInputs& c);
Array direct_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double direct_reduce_scatter_cost(const CostInputs& c);
std::vector<Array> bruck_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double bruck_all_to_all_cost(const CostInputs& c);
std::vector<Array> direct_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double direct_all_to_all_cost(const CostInputs& c);

// all-reduce, broadcast and reduce algorithms
Array recursive_doubling_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double recursive_doubling_all_reduce_cost(const CostInputs& c);
Array rabenseifner_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double rabenseifner_all_reduce_cost(const CostInputs& c);
Array binomial_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double binomial_all_reduce_cost(const CostInputs& c);
Array double_binary_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
// k = pipeline pieces per half; the registry row prices k = 1 (CostInputs has no k).
double double_binary_tree_all_reduce_cost(const CostInputs& c, int chunks);
double double_binary_tree_all_reduce_unpipelined_cost(const CostInputs& c);
Array direct_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double direct_all_reduce_cost(const CostInputs& c);
Array hierarchical_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
// The registry rows price the flat shape {p} (CostInputs has no dimensions), where both equal ring.
double hierarchical_all_reduce_cost(const CostInputs& c, const std::vector<int>& dimensions);
double hierarchical_all_reduce_flat_cost(const CostInputs& c);
Array multidim_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
// How all_reduce_along_dimensions walks the group's dimensions (Communicator::dimensions()): their
// reduce-scatters in `order`, then their all-gathers back, dimension d by its algorithm names[d]; with
// `reversed` each dimension's group in the opposite order, so that its ring turns the other way.
struct DimensionPlan {
  std::vector<std::string> names;
  std::vector<int> order;
  bool reversed = false;
};
Array all_reduce_along_dimensions(Communicator& comm, const Array& flat, ReduceOp op,
                                  const DimensionPlan& plan);
// The group of each dimension of `plan`, in plan.order: its members (ranks of comm, in the order of their
// coordinate along it, turned round if plan.reversed) and their communicator.
struct DimensionSubgroup {
  int dimension;
  std::vector<int> members;
  std::unique_ptr<Communicator> comm;
};
std::vector<DimensionSubgroup> dimension_subgroups(Communicator& comm, const DimensionPlan& plan);
// The torus algorithms' parts (torus_parts.cpp): a message of `elements` is cut into up to 2k parts, k the
// group's dimensions; part c walks the dimensions from c / 2 round the others, its rings turning way c % 2,
// so that at every phase the parts drive distinct (dimension, way) pairs (along a mesh's lines k parts, one
// way). All run at once, each on a channel of its own.
int torus_part_count(const Communicator& comm, std::int64_t elements);
// Where rank `rank`'s piece sits among every rank's, the pieces ordered by the ranks' coordinates along
// `digits` (dimensions of `dimensions`), the first the most significant: how a torus all-gather or
// reduce-scatter part lays out the pieces it moves.
std::int64_t digit_position(const std::vector<int>& dimensions, const std::vector<int>& digits, int rank);
void on_torus_parts(Communicator& comm, int parts,
                    const std::function<void(Communicator& lane, int part, const DimensionPlan& plan)>& body);
Array torus_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
std::vector<Array> torus_all_gather(Communicator& comm, const Array& mine);
Array torus_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
// names: the dimension algorithms, one per dimension; empty for ring along every one.
double multidim_all_reduce_cost(const CostInputs& c, const std::vector<int>& dimensions,
                                const std::vector<std::string>& names);
double multidim_all_reduce_flat_cost(const CostInputs& c);
Array chain_broadcast(Communicator& comm, const Array& flat, int root);
// k = pipeline pieces; the registry rows price k = 1.
double chain_broadcast_cost(const CostInputs& c, int chunks);
double chain_broadcast_unpipelined_cost(const CostInputs& c);
Array chain_reduce(Communicator& comm, const Array& flat, ReduceOp op, int root);
double chain_reduce_cost(const CostInputs& c, int chunks);
double chain_reduce_unpipelined_cost(const CostInputs& c);

// NCCL's channel-parallel rings (nccl_ring_*.cpp); their closed forms are the single ring's.
Array nccl_ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
std::vector<Array> nccl_ring_all_gather(Communicator& comm, const Array& mine);
Array nccl_ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
// NCCL's NVLS all-reduce through a reducing switch (nvls_all_reduce.cpp), and `nccl`: what NCCL's tuner picks
// among the modelled algorithms (nccl_selection.cpp); nccl's closed forms are the ring's.
Array nvls_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double nvls_all_reduce_cost(const CostInputs& c);
// NVLSTree (nvls_tree_all_reduce.cpp): NVLS inside each node, NCCL's double binary tree of the nodes across
// them; and what rank `rank` of a group of `local` ranks on each of `nodes` nodes exchanges with other nodes
// for an all-reduce of `bytes` (by peer rank, each peer once). Its registry row prices the switch's part
// (nvls_all_reduce_cost): the tree moves beside it.
Array nvls_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
std::vector<Communicator::Exchange> nvls_tree_exchanges(int local, int nodes, int rank, Bytes bytes);
// NCCL's Tree (nccl_tree_all_reduce.cpp): chains inside nodes, a double binary tree of the nodes. Its
// registry row prices the textbook double binary tree (double_binary_tree_all_reduce_unpipelined_cost).
Array nccl_tree_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
// RCCL's MSCCL all-pairs all-reduce on 8 GPUs of a node (msccl_all_pairs_all_reduce.cpp), run as `program`
// (msccl_all_reduce_program's for the call, rccl_msccl.hpp) on `node`'s figures, and what rank `rank` of
// `ranks` exchanges in it for a `bytes` vector.
Array msccl_all_pairs_all_reduce(Communicator& comm, const Array& flat, ReduceOp op, const RcclNode& node,
                                 const MscclProgram& program);
std::vector<Communicator::Exchange> msccl_all_pairs_exchanges(int rank, int ranks, Bytes bytes);
Array nccl_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
std::vector<Array> nccl_all_gather(Communicator& comm, const Array& mine);
Array nccl_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
// The ring of each of `channels` channels over a group of logical shape `dimensions` (rank lists, every rank
// once), as nccl_channel_rings.cpp draws them.
// Built once per shape and channel count and shared: every device of every call asks for the same rings.
std::shared_ptr<const ChannelRings> nccl_channel_rings(const std::vector<int>& dimensions, int channels);
// The nodes of a group shaped {devices per node, nodes...}: the product of every dimension but the first.
int group_nodes(const std::vector<int>& dimensions);
// The ranks of a group of that shape: the product of every dimension.
int group_size(const std::vector<int>& dimensions);
// The arc-disjoint Hamiltonian cycles of d devices those rings walk a node along (each starting at 0).
const std::vector<std::vector<int>>& node_cycles(int d);

int floor_log2(int p);
int ceil_log2(int p);

// MPICH's fold of any p to p' = 2^floor(lg p) ranks (power_of_two_fold.cpp).
struct PowerOfTwoFold {
  int pof2 = 1;        // p'
  int rem = 0;         // p - p'
  int core_rank = -1;  // this rank's rank among the p' (-1: folded away, waits for the result)
  // The rank of core rank `core`.
  int rank_of(int core) const;
};
// Folds `data` (this rank's vector, reduced in place on the odd ranks below 2 rem).
PowerOfTwoFold fold_to_power_of_two(Communicator& comm, Array& data, ReduceOp op);
// Hands the result back to the ranks folded away.
void unfold_from_power_of_two(Communicator& comm, const PowerOfTwoFold& fold, Array& data);

// The ranks that differ from `rank` only in coordinate `dimension` of the mixed-radix shape `dimensions`
// (dimension 0 varying fastest), in the order of that coordinate.
std::vector<int> dimension_group(const std::vector<int>& dimensions, int rank, int dimension);
// Coordinate `dimension` of `rank` in that shape.
int coordinate(const std::vector<int>& dimensions, int rank, int dimension);

// One rank's place in a binary tree: its parent (-1 at the root) and children.
struct BinaryTreeLinks {
  int parent = -1;
  std::vector<int> children;
};
// NCCL's double binary tree (ncclGetDtree), trees 0 and 1: tree 0 is ncclGetBtree, tree 1 its mirror image
// r -> p-1-r for even p or its shift r -> r+1 for odd p.
std::vector<BinaryTreeLinks> nccl_double_binary_tree(int p, int rank);
// The edge from `child` up to `parent` in `tree`, with its slot colour (double_binary_tree_all_reduce.cpp).
struct DoubleTreeEdge {
  int child;
  int parent;
  int tree;
  int child_height;  // leaves 0
  int parent_depth;  // roots 0
  int colour;
};
struct DoubleTreeSchedule {
  int p = 0;
  int colours = 1;  // slots per period; no rank sends two or receives two messages of one colour
  int max_child_height = 0;
  std::vector<DoubleTreeEdge> edges;
  std::vector<std::vector<int>> edges_of;  // per rank, the edges it sends or receives on
  // The slot in which edge e carries piece `chunk` up, and down (after the chunks pieces have gone up).
  int up_slot(const DoubleTreeEdge& e, int chunk) const;
  int down_slot(const DoubleTreeEdge& e, int chunk, int chunks) const;
  bool receives_at(int rank, int slot, int chunks) const;
};
// Built once per p and kept.
const DoubleTreeSchedule& double_tree_schedule(int p);

}  // namespace spmdsim::collectives
