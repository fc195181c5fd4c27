// ZeRO's flat shards: host-side layout and the device-side gather and reduce-scatter.
#include "spmdsim/models/sharding.hpp"

#include <fmt/format.h>

#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// The flattened leaf with zeros appended up to `padded` elements.
Array flat_padded(const Array& leaf, std::int64_t padded) {
  Array flat = reshape(leaf, {leaf.size()});
  if (padded == leaf.size()) return flat;
  Array zeros = leaf.is_abstract() ? Array::abstract({padded - leaf.size()}, leaf.dtype())
                                   : Array::zeros({padded - leaf.size()}, leaf.dtype());
  return concatenate({flat, zeros});
}

// The first elements of a flat array that a leaf of `shape` fills, reshaped to it: the padding cut.
Array without_padding(Array flat, const Shape& shape) {
  const auto n = num_elements(shape);
  if (flat.size() != n) flat = slice(flat, 0, 0, n);
  return reshape(flat, shape);
}

}  // namespace

std::int64_t shard_size(std::int64_t n, int num_shards) {
  if (num_shards < 1) throw ValueError(fmt::format("cannot shard over {} devices", num_shards));
  return (n + num_shards - 1) / num_shards;
}

Array shard_leaf(const Array& leaf, int num_shards) {
  const auto shard = shard_size(leaf.size(), num_shards);
  return reshape(flat_padded(leaf, shard * num_shards), {num_shards, shard});
}

Tree shard_tree(const Tree& tree, int num_shards) {
  return tree.map([num_shards](const Array& leaf) { return shard_leaf(leaf, num_shards); });
}

Array unshard_leaf(const Array& shards, const Shape& shape) {
  const auto n = num_elements(shape);
  if (shards.ndim() != 2 || shards.size() < n)
    throw ValueError(fmt::format("unshard: shards of shape {} cannot hold a leaf of shape {}",
                                 shape_str(shards.shape()), shape_str(shape)));
  return without_padding(reshape(shards, {shards.size()}), shape);
}

Tree unshard_tree(const Tree& shards, const Tree& like) {
  const auto shapes = like.leaves();
  std::size_t next = 0;
  return shards.map([&](const Array& leaf) { return unshard_leaf(leaf, shapes.at(next++).shape()); });
}

Array local_shard(const Array& full, int rank, int num_shards) {
  const auto shard = shard_size(full.size(), num_shards);
  const auto padded = shard * num_shards;
  if (padded == full.size()) return slice(reshape(full, {full.size()}), 0, rank * shard, (rank + 1) * shard);
  return slice(flat_padded(full, padded), 0, rank * shard, (rank + 1) * shard);
}

Tree local_shard_tree(const Tree& full, int rank, int num_shards) {
  return full.map([&](const Array& leaf) { return local_shard(leaf, rank, num_shards); });
}

Tree unpadded_tree(const Tree& gathered, const Tree& like) {
  const auto shapes = like.leaves();
  std::size_t next = 0;
  return gathered.map([&](const Array& flat) { return without_padding(flat, shapes.at(next++).shape()); });
}

Tree gather_tree(const Tree& shards, const Tree& like, std::string_view axis_name) {
  return unpadded_tree(all_gather(shards, axis_name, 0, /*tiled=*/true), like);
}

Tree padded_flat_tree(const Tree& full, int num_shards) {
  return full.map([num_shards](const Array& leaf) {
    return flat_padded(leaf, shard_size(leaf.size(), num_shards) * num_shards);
  });
}

}  // namespace spmdsim::models
