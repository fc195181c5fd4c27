#include "spmdsim/memory_tags.hpp"

#include <algorithm>
#include <numeric>

#include "engine/device_context.hpp"
#include "engine/program_record.hpp"

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

namespace {

// The calling device's ledger, null on the host. A recorded program reads it in device_effect only: its
// readings differ from one device to another.
const MemoryLedger* device_ledger() {
  const detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) return nullptr;
  if (ctx->recorder() != nullptr)
    throw detail::NotReplayable("the device's memory read outside device_effect");
  return ctx->runtime().ledger(ctx->device()).get();
}

}  // namespace

MemoryByTag live_memory() {
  MemoryByTag out;
  if (const MemoryLedger* ledger = device_ledger()) out.bytes = ledger->in_use_by_tag();
  return out;
}

MemoryByTag call_peak_memory() {
  MemoryByTag out;
  if (const MemoryLedger* ledger = device_ledger()) out.bytes = ledger->window_at_peak();
  return out;
}

std::size_t memory_mark() {
  const MemoryLedger* ledger = device_ledger();
  return ledger == nullptr ? 0 : ledger->timeline().size();
}

Bytes peak_memory_since(std::size_t mark) {
  const MemoryLedger* ledger = device_ledger();
  if (ledger == nullptr) return 0;
  const MemoryTimeline& events = ledger->timeline();
  Bytes peak = mark == 0 ? 0 : events[mark - 1].in_use;
  for (std::size_t i = mark; i < events.size(); ++i) peak = std::max(peak, events[i].in_use);
  return peak;
}

}  // namespace spmdsim
