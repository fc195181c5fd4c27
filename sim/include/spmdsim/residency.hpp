// Where a device-resident array lives: its per-device shards stay in device memory (as in JAX) until the host
// reads them with Simulation::device_get, and a later pmap over the same devices and axis uses them in place.
// pmap results are resident; so are the arrays of Simulation::device_put_sharded / device_put_replicated,
// whose shards may still be on their way from the host.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

namespace detail {
class HostCopy;
}

// A resident array's shards, one per device in pmap order, each bound to its device's buffer. Shards without
// values of one shape and dtype (a call's results on abstract arguments) are kept as that shape once and each
// device's buffer: a 7B model's state on 16,384 devices is millions of shards, and an Array handle is seven
// times a buffer handle's size.
class DeviceShards {
 public:
  DeviceShards() = default;
  explicit DeviceShards(std::vector<Array> shards);
  // Shards of `shape` (abstract), one per device, in these buffers.
  DeviceShards(const Array& shape, std::vector<std::shared_ptr<DeviceAllocation>> buffers);

  std::size_t size() const { return compact_ ? buffers_.size() : arrays_.size(); }
  Array operator[](std::size_t rank) const;
  // Moves shard `rank` out: the shards no longer hold its buffer.
  Array take(std::size_t rank);

 private:
  bool compact_ = false;
  Array shape_;  // compact: every shard's shape and dtype, abstract
  std::vector<std::shared_ptr<DeviceAllocation>> buffers_;  // compact: each device's buffer
  std::vector<Array> arrays_;                               // otherwise: the shards themselves
};

struct Residency {
  std::vector<int> devices;  // global device indices, in pmap order
  Axis axis;                 // the axis the shards are stacked along in the host view; none: replicated
  // One per device, bound to that device's buffer. Mutable: a call that takes the array as a donated
  // argument moves them out (take_donated).
  mutable DeviceShards shards;
  // A put's shards: per device, the host copy that brings them (a device waits for its arrival before using
  // them); empty for pmap results.
  std::vector<std::shared_ptr<const detail::HostCopy>> arrivals;
  // Set once the host has read the shards (Simulation::device_get): reading again costs nothing.
  mutable bool fetched = false;
  // Set once a call took the shards as a donated argument (PmapOptions::donate_argnums): the array is
  // deleted, as JAX deletes a donated one.
  mutable bool deleted = false;

  DeviceShards take_donated() const {
    deleted = true;
    return std::move(shards);
  }
};

}  // namespace spmdsim
