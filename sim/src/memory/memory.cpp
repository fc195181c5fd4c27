#include "spmdsim/memory.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include "engine/device_context.hpp"

#include "report/units_format.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

constexpr std::array<std::string_view, kNumMemoryTags> kTagNames{
    "replicated_args", "input_shards",    "outputs",   "collective_scratch", "temporaries",
    "parameters",      "optimizer_state", "gradients", "activations",        "communication_buckets"};

}  // namespace

std::string_view memory_tag_name(MemoryTag tag) { return kTagNames[static_cast<std::size_t>(tag)]; }

MemoryLedger::MemoryLedger(std::string device_name, Bytes capacity)
    : device_name_(std::move(device_name)), capacity_(capacity) {}

std::uint64_t MemoryLedger::allocate(Bytes bytes, MemoryTag tag, std::string label, Seconds now) {
  if (in_use_ + bytes > capacity_) {
    auto live = live_buffers();
    // Largest first; among equals, the oldest first.
    std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.since < b.since;
    });
    std::string listing;
    for (std::size_t i = 0; i < live.size() && i < 10; ++i)
      listing += fmt::format("\n  {} ({}, {}) since t={:.9g} s", live[i].label, memory_tag_name(live[i].tag),
                             detail::format_bytes(live[i].bytes), live[i].since);
    if (live.size() > 10) listing += fmt::format("\n  ... and {} smaller buffers", live.size() - 10);
    throw OutOfMemoryError(fmt::format(
        "RESOURCE_EXHAUSTED: Out of memory on {} while trying to allocate {} for {} ({}): {} of {} in use. "
        "Live buffers ({}):{}",
        device_name_, detail::format_bytes(bytes), label, memory_tag_name(tag), detail::format_bytes(in_use_),
        detail::format_bytes(capacity_), live.size(), listing));
  }
  std::uint64_t id = slots_.size();
  if (free_slots_.empty()) {
    slots_.emplace_back();
  } else {
    id = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[id] = LiveBuffer{id, std::move(label), tag, bytes, now};
  record(now, tag, bytes);
  return id;
}

void MemoryLedger::release(std::uint64_t id, Seconds now) {
  if (id >= slots_.size() || !slots_[id]) return;
  record(now, slots_[id]->tag, -slots_[id]->bytes);
  slots_[id].reset();
  free_slots_.push_back(id);
}

void MemoryLedger::retag(std::uint64_t id, MemoryTag tag, Seconds now) {
  if (id >= slots_.size() || !slots_[id] || slots_[id]->tag == tag) return;
  LiveBuffer& buffer = *slots_[id];
  record(now, buffer.tag, -buffer.bytes);
  buffer.tag = tag;
  record(now, tag, buffer.bytes);
}

void MemoryLedger::record(Seconds now, MemoryTag tag, Bytes delta) {
  in_use_ += delta;
  auto& tagged = by_tag_[static_cast<std::size_t>(tag)];
  tagged += delta;
  tag_peaks_[static_cast<std::size_t>(tag)] = std::max(tag_peaks_[static_cast<std::size_t>(tag)], tagged);
  if (in_use_ > peak_) {
    peak_ = in_use_;
    peak_time_ = now;
    at_peak_ = by_tag_;
  }
  if (in_use_ > window_peak_) {
    window_peak_ = in_use_;
    window_at_peak_ = by_tag_;
  }
  timeline_.push_back({now, in_use_, tag, delta});
}

void MemoryLedger::start_window() {
  window_peak_ = in_use_;
  window_at_peak_ = by_tag_;
}

std::vector<LiveBuffer> MemoryLedger::live_buffers() const {
  std::vector<LiveBuffer> out;
  for (const auto& slot : slots_)
    if (slot) out.push_back(*slot);
  return out;
}

DeviceAllocation::DeviceAllocation(std::shared_ptr<MemoryLedger> ledger, int device, Bytes bytes, MemoryTag tag,
                                   std::string label)
    : ledger_(ledger), device_(device), bytes_(bytes), tag_(tag) {
  id_ = ledger->allocate(bytes, tag, std::move(label), detail::memory_event_time(device_));
}

DeviceAllocation::~DeviceAllocation() {
  if (auto ledger = ledger_.lock()) ledger->release(id_, detail::memory_event_time(device_));
}

void DeviceAllocation::retag(MemoryTag tag) {
  tag_ = tag;
  if (auto ledger = ledger_.lock()) ledger->retag(id_, tag, detail::memory_event_time(device_));
}

}  // namespace spmdsim
