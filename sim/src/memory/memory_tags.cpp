#include "spmdsim/memory_tags.hpp"

#include <algorithm>
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

std::size_t memory_mark() {
  const detail::DeviceContext* ctx = detail::current_device();
  return ctx == nullptr ? 0 : ctx->runtime().ledger(ctx->device())->timeline().size();
}

Bytes peak_memory_since(std::size_t mark) {
  const detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) return 0;
  const MemoryTimeline& events = ctx->runtime().ledger(ctx->device())->timeline();
  Bytes peak = mark == 0 ? 0 : events[mark - 1].in_use;
  for (std::size_t i = mark; i < events.size(); ++i) peak = std::max(peak, events[i].in_use);
  return peak;
}

}  // namespace spmdsim
