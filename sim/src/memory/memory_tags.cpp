#include "spmdsim/memory_tags.hpp"

#include <numeric>

#include "engine/device_context.hpp"

namespace spmdsim {

Array tag_as(const Array& x, MemoryTag tag) {
  const detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) return x;
  const auto& allocation = x.allocation();
  if (allocation && allocation->device() == ctx->device()) allocation->retag(tag);
  return x;
}

Tree tag_as(const Tree& x, MemoryTag tag) {
  x.for_each_leaf([tag](const Array& leaf) { tag_as(leaf, tag); });
  return x;
}

Bytes MemoryByTag::total() const {
  return std::accumulate(bytes.begin(), bytes.end(), Bytes{0});
}

MemoryByTag live_memory() {
  MemoryByTag out;
  const detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) return out;
  for (const LiveBuffer& buffer : ctx->runtime().ledger(ctx->device())->live_buffers())
    out.bytes[buffer.tag.index()] += buffer.bytes;
  return out;
}

MemoryByTag call_peak_memory() {
  MemoryByTag out;
  const detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) return out;
  out.bytes = ctx->runtime().ledger(ctx->device())->window_at_peak();
  return out;
}

}  // namespace spmdsim
