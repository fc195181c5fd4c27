// Saying what a device buffer holds. Ops allocate their results as temporaries; a model that knows better
// (these are its parameters, its optimizer state, its gradients, its saved activations) retags them, so the
// memory report can tell model state from scratch. A read-out of what the calling device holds now lets a
// model take the measure of its state at a chosen point of its step.
#pragma once

#include <array>

#include "spmdsim/array.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

// Inside a pmapped function: from now on the device buffer of x, if it lives on the calling device, counts
// under `tag` in that device's ledger (the move happens at the current simulated time; every array that
// shares the buffer, such as a reshape of x, shares the tag). Returns x. On the host, or for an array with no
// buffer on the calling device (a host constant), it is the identity and costs nothing.
Array tag_as(const Array& x, MemoryTag tag);
// The same for every leaf of a tree.
Tree tag_as(const Tree& x, MemoryTag tag);

// Bytes by memory tag.
struct MemoryByTag {
  std::array<Bytes, kNumMemoryTags> bytes{};

  Bytes operator[](MemoryTag tag) const { return bytes[static_cast<std::size_t>(tag)]; }
  Bytes total() const;
  // Parameters + optimizer state + gradients: what the ZeRO paper calls model states.
  Bytes model_states() const;
};

// Inside a pmapped function: what the calling device's buffers hold right now, by tag. On the host: zeros.
MemoryByTag live_memory();

}  // namespace spmdsim
