// ZeRO's flat sharding of a pytree over N devices. Each leaf is flattened (row-major) and split into N equal
// contiguous shards; a leaf whose size n is not a multiple of N is padded with zeros at the end to
// ceil(n / N) * N elements first, so every shard has ceil(n / N) elements. Padding elements are zero in the
// parameters, the gradients and the optimizer state, and every optimizer here keeps a zero there
// (sgd, momentum: 0 - lr * 0; adam: 0 / (sqrt(0) + eps) = 0), so they never leak into the values. They do
// take memory: model-state memory equals the ZeRO paper's formulas exactly only when every leaf's size is
// a multiple of N.
//
// Host view of a sharded leaf: [N, shard] (pmap in_axes / out_axes 0); device view: [shard].
#pragma once

#include <cstdint>
#include <string_view>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

// Elements of each shard of an n-element leaf over num_shards devices: ceil(n / num_shards).
std::int64_t shard_size(std::int64_t n, int num_shards);

// Host: a leaf as its N shards stacked, [N, shard_size] (flattened, zero-padded). Abstract stays abstract.
Array shard_leaf(const Array& leaf, int num_shards);
Tree shard_tree(const Tree& tree, int num_shards);
// Host: the inverse, from the stacked shards [N, shard] back to a leaf of `shape` (padding dropped).
Array unshard_leaf(const Array& shards, const Shape& shape);
// The same leaf by leaf; `like` gives the shapes (a tree of the full leaves, abstract is fine).
Tree unshard_tree(const Tree& shards, const Tree& like);

// Device (inside pmap): this device's shard of a full leaf, [shard] (a slice, padded where needed).
Array local_shard(const Array& full, int rank, int num_shards);
Tree local_shard_tree(const Tree& full, int rank, int num_shards);
// Device: the full leaves, shaped as `like`'s, from every device's shards of them: one all_gather (tiled)
// over the tree, then each leaf's padding cut (unpadded_tree, for a gather started asynchronously).
Tree gather_tree(const Tree& shards, const Tree& like, std::string_view axis_name);
Tree unpadded_tree(const Tree& gathered, const Tree& like);
// Device: each leaf flattened and padded to N shards, as a tiled psum_scatter over N devices takes it (the
// leaf's own buffer where it needs no padding).
Tree padded_flat_tree(const Tree& full, int num_shards);

}  // namespace spmdsim::models
