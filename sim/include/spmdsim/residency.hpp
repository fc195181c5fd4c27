// Where a device-resident array lives: its per-device shards stay in device memory (as in JAX) until the host
// reads them with Simulation::device_get, and a later pmap over the same devices and axis uses them in place.
// pmap results are resident; so are the arrays of Simulation::device_put_sharded / device_put_replicated,
// whose shards may still be on their way from the host.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

namespace detail {
class HostCopy;
}

struct Residency {
  std::vector<int> devices;   // global device indices, in pmap order
  Axis axis;                  // the axis the shards are stacked along in the host view; none: replicated
  // One per device, bound to that device's buffer. Mutable: a call that takes the array as a donated
  // argument moves them out (take_donated).
  mutable std::vector<Array> shards;
  // A put's shards: per device, the host copy that brings them (a device waits for its arrival before using
  // them); empty for pmap results.
  std::vector<std::shared_ptr<const detail::HostCopy>> arrivals;
  // Set once the host has read the shards (Simulation::device_get): reading again costs nothing.
  mutable bool fetched = false;
  // Set once a call took the shards as a donated argument (PmapOptions::donate_argnums): the array is
  // deleted, as JAX deletes a donated one.
  mutable bool deleted = false;

  std::vector<Array> take_donated() const {
    deleted = true;
    return std::move(shards);
  }
};

}  // namespace spmdsim
