// Saying what a device buffer holds. Ops allocate their results as temporaries; a model that knows better
// retags them with tags of its own (register_memory_tag: its parameters, its optimizer state, its saved
// activations...), so the memory report can tell model state from scratch. A read-out of what the calling
// device holds now lets a model take the measure of its state at a chosen point of its step.
#pragma once

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
  BytesByTag bytes{};

  Bytes operator[](MemoryTag tag) const { return bytes[tag.index()]; }
  Bytes total() const;
};

// Inside a pmapped function: what the calling device's buffers hold right now, by tag. On the host: zeros.
MemoryByTag live_memory();
// Inside a pmapped function: what the calling device's buffers held, by tag, at their peak so far in this
// pmap call (its window). On the host: zeros.
MemoryByTag call_peak_memory();
// Inside a pmapped function: a mark of the calling device's ledger now (the count of its events so far), and
// the most its buffers have held since such a mark, at least what they held at it: the peak of one part of a
// call. On the host: 0.
std::size_t memory_mark();
Bytes peak_memory_since(std::size_t mark);

}  // namespace spmdsim
