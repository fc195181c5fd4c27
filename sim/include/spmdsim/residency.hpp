// Where a pmap result lives: its per-device shards stay in device memory (as in JAX) until the host reads
// them with Simulation::device_get, and a later pmap over the same devices and axis uses them in place.
#pragma once

#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

struct Residency {
  std::vector<int> devices;   // global device indices, in pmap order
  Axis axis;                  // the axis the shards are stacked along in the host view; none: replicated
  std::vector<Array> shards;  // one per device, bound to that device's buffer
  // Set once the host has read the shards (Simulation::device_get): reading again costs nothing.
  mutable bool fetched = false;
};

}  // namespace spmdsim
