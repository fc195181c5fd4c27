#include "spmdsim/memory.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/device_context.hpp"
#include "report/units_format.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

// The tag names by index, the engine's first.
std::vector<std::string>& tag_names() {
  static std::vector<std::string> names{"replicated_args", "input_shards", "outputs", "collective_scratch",
                                        "temporaries"};
  return names;
}

// Every buffer label seen, by index (MemoryLabel).
class Labels {
 public:
  std::uint32_t index(std::string_view label) {
    if (const auto found = indices_.find(label); found != indices_.end()) return found->second;
    const auto index = static_cast<std::uint32_t>(texts_.size());
    indices_.emplace(texts_.emplace_back(label), index);
    return index;
  }
  const std::string& text(std::uint32_t index) const { return texts_[index]; }

 private:
  std::deque<std::string> texts_;  // by index; a deque's elements never move, so the keys below stay valid
  std::unordered_map<std::string_view, std::uint32_t> indices_;
};

Labels& labels() {
  static Labels all;
  return all;
}

}  // namespace

MemoryLabel::MemoryLabel(std::string_view text) : index_(labels().index(text)) {}

const std::string& MemoryLabel::text() const {
  return labels().text(index_);
}

MemoryTag register_memory_tag(std::string_view name) {
  auto& names = tag_names();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found != names.end()) return MemoryTag(static_cast<std::uint8_t>(found - names.begin()));
  if (names.size() == kMaxMemoryTags)
    throw ValueError(fmt::format("cannot register memory tag '{}': all {} tags are taken ({})", name,
                                 kMaxMemoryTags, fmt::join(names, ", ")));
  names.emplace_back(name);
  return MemoryTag(static_cast<std::uint8_t>(names.size() - 1));
}

std::vector<MemoryTag> memory_tags() {
  std::vector<MemoryTag> tags;
  for (std::size_t i = 0; i < tag_names().size(); ++i) tags.emplace_back(static_cast<std::uint8_t>(i));
  return tags;
}

std::string_view memory_tag_name(MemoryTag tag) {
  return tag_names().at(tag.index());
}

MemoryLedger::MemoryLedger(std::string device_name, Bytes capacity, bool keep_timeline)
    : device_name_(std::move(device_name)), capacity_(capacity), keep_timeline_(keep_timeline) {}

std::uint64_t MemoryLedger::allocate(Bytes bytes, MemoryTag tag, MemoryLabel label, Seconds now) {
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
        device_name_, detail::format_bytes(bytes), label.text(), memory_tag_name(tag),
        detail::format_bytes(in_use_), detail::format_bytes(capacity_), live.size(), listing));
  }
  const Slot slot{bytes, now, label, tag, true};
  std::uint64_t id = slots_.size();
  if (free_slots_.empty()) {
    slots_.push_back(slot);
  } else {
    id = free_slots_.back();
    free_slots_.pop_back();
    slots_[id] = slot;
  }
  if (observer_ != nullptr) observer_->allocated(id, bytes, tag, label);
  record(now, tag, bytes);
  return id;
}

void MemoryLedger::release(std::uint64_t id, Seconds now) {
  if (id >= slots_.size() || !slots_[id].live) return;
  if (observer_ != nullptr) observer_->released(id);
  record(now, slots_[id].tag, -slots_[id].bytes);
  slots_[id].live = false;
  free_slots_.push_back(id);
}

void MemoryLedger::retag(std::uint64_t id, MemoryTag tag, Seconds now) {
  if (id >= slots_.size() || !slots_[id].live) return;
  if (observer_ != nullptr) observer_->retagged(id, tag);
  if (slots_[id].tag == tag) return;
  Slot& buffer = slots_[id];
  record(now, buffer.tag, -buffer.bytes);
  buffer.tag = tag;
  record(now, tag, buffer.bytes);
}

void MemoryLedger::record(Seconds now, MemoryTag tag, Bytes delta) {
  in_use_ += delta;
  auto& tagged = by_tag_[tag.index()];
  tagged += delta;
  tag_peaks_[tag.index()] = std::max(tag_peaks_[tag.index()], tagged);
  if (in_use_ > peak_) {
    peak_ = in_use_;
    peak_time_ = now;
    at_peak_ = by_tag_;
  }
  if (in_use_ > window_peak_) {
    window_peak_ = in_use_;
    window_at_peak_ = by_tag_;
  }
  if (keep_timeline_) timeline_.push_back({now, in_use_, tag, delta});
}

void MemoryLedger::start_window() {
  window_peak_ = in_use_;
  window_at_peak_ = by_tag_;
}

std::vector<LiveBuffer> MemoryLedger::live_buffers() const {
  std::vector<LiveBuffer> out;
  for (std::uint64_t id = 0; id < slots_.size(); ++id)
    if (const Slot& slot = slots_[id]; slot.live)
      out.push_back({id, slot.label.text(), slot.tag, slot.bytes, slot.since});
  return out;
}

DeviceAllocation::DeviceAllocation(const std::shared_ptr<MemoryLedger>& ledger, int device, Bytes bytes,
                                   MemoryTag tag, MemoryLabel label)
    : ledger_(ledger),
      device_(device),
      id_(ledger->allocate(bytes, tag, label, detail::memory_event_time(device))) {}

// With make_shared's 16 bytes of counts, 48: the allocator's size class below 64.
static_assert(sizeof(DeviceAllocation) <= 32);

DeviceAllocation::~DeviceAllocation() {
  if (auto ledger = ledger_.lock()) ledger->release(id_, detail::memory_event_time(device_));
}

void DeviceAllocation::retag(MemoryTag tag) {
  if (auto ledger = ledger_.lock()) ledger->retag(id_, tag, detail::memory_event_time(device_));
}

}  // namespace spmdsim
