#include "spmdsim/residency.hpp"

#include <algorithm>

namespace spmdsim {

DeviceShards::DeviceShards(std::vector<Array> shards) {
  const auto abstract_like_first = [&](const Array& shard) {
    return shard.is_abstract() && !shard.residency() && shard.shape() == shards.front().shape() &&
           shard.dtype() == shards.front().dtype();
  };
  compact_ = !shards.empty() && std::all_of(shards.begin(), shards.end(), abstract_like_first);
  if (!compact_) {
    arrays_ = std::move(shards);
    return;
  }
  shape_ = Array::abstract(shards.front().shape(), shards.front().dtype());
  buffers_.reserve(shards.size());
  for (const Array& shard : shards) buffers_.push_back(shard.allocation());
}

DeviceShards::DeviceShards(const Array& shape, std::vector<std::shared_ptr<DeviceAllocation>> buffers)
    : compact_(true), shape_(Array::abstract(shape.shape(), shape.dtype())), buffers_(std::move(buffers)) {}

Array DeviceShards::operator[](std::size_t rank) const {
  return compact_ ? shape_.on_device(buffers_.at(rank)) : arrays_.at(rank);
}

Array DeviceShards::take(std::size_t rank) {
  return compact_ ? shape_.on_device(std::move(buffers_.at(rank))) : std::move(arrays_.at(rank));
}

}  // namespace spmdsim
