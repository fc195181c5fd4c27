// Device memory accounting. SimGrid has no memory resource, so every device buffer is an entry in its
// device's ledger from allocation to release (RAII: the buffer's last Array handle going away releases
// it), tagged with what it holds. Going past capacity is an OutOfMemoryError.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/shared_vector.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

// What a device buffer holds: an index into the registry of tag names. The engine's own tags are below; a
// layer above registers its own (register_memory_tag), and the reports show every tag in registration order.
class MemoryTag {
 public:
  constexpr explicit MemoryTag(std::uint8_t index) : index_(index) {}
  constexpr std::size_t index() const { return index_; }
  friend constexpr bool operator==(MemoryTag, MemoryTag) = default;

  static const MemoryTag replicated_args;  // pmap arguments with in_axes None: one full copy per device
  static const MemoryTag input_shards;     // pmap arguments split along a mapped axis
  static const MemoryTag outputs;          // pmap results
  static const MemoryTag collective_scratch;
  static const MemoryTag temporaries;

 private:
  std::uint8_t index_;
};
inline constexpr MemoryTag MemoryTag::replicated_args{0};
inline constexpr MemoryTag MemoryTag::input_shards{1};
inline constexpr MemoryTag MemoryTag::outputs{2};
inline constexpr MemoryTag MemoryTag::collective_scratch{3};
inline constexpr MemoryTag MemoryTag::temporaries{4};

// Room for the engine's tags and the registered ones: per-tag byte counts are fixed arrays, as they are
// updated on every allocation.
inline constexpr std::size_t kMaxMemoryTags = 16;
using BytesByTag = std::array<Bytes, kMaxMemoryTags>;  // indexed by MemoryTag::index()

// The tag called `name`, registered after the tags already known if it is new. Registering more than
// kMaxMemoryTags tags is a ValueError.
MemoryTag register_memory_tag(std::string_view name);
// Every registered tag, the engine's first, in registration order (the order of the reports' columns).
std::vector<MemoryTag> memory_tags();
std::string_view memory_tag_name(MemoryTag tag);

// What a buffer holds, as the out-of-memory errors name it, interned: a device holds thousands of buffers and
// thousands of devices allocate under the same labels, so a label is kept and handed on as its index among
// every label seen. Any string converts to the label of that text.
class MemoryLabel {
 public:
  // NOLINTBEGIN(google-explicit-constructor): a label is its text
  MemoryLabel(std::string_view text);
  MemoryLabel(const char* text) : MemoryLabel(std::string_view(text)) {}
  MemoryLabel(const std::string& text) : MemoryLabel(std::string_view(text)) {}
  // NOLINTEND(google-explicit-constructor)
  const std::string& text() const;

 private:
  std::uint32_t index_;
};

struct MemoryEvent {
  Seconds time;
  Bytes in_use;  // after the event
  MemoryTag tag;
  Bytes delta;  // positive: allocation, negative: release
};

// A device's memory events in order, shared with the reports taken of them.
using MemoryTimeline = SharedVector<MemoryEvent>;

struct LiveBuffer {
  std::uint64_t id;
  std::string label;
  MemoryTag tag;
  Bytes bytes;
  Seconds since;
};

// Told of every event of a ledger it observes, with the ids the ledger gives (a program's recording,
// engine/program_record.hpp).
class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  virtual void allocated(std::uint64_t id, Bytes bytes, MemoryTag tag, MemoryLabel label) = 0;
  virtual void released(std::uint64_t id) = 0;
  // Every retag asked for, also one that keeps the buffer's tag.
  virtual void retagged(std::uint64_t id, MemoryTag tag) = 0;
};

// One device's buffers over simulated time.
class MemoryLedger {
 public:
  // keep_timeline: record every event in timeline(); off, it stays empty (the peaks are kept either way).
  MemoryLedger(std::string device_name, Bytes capacity, bool keep_timeline = true);

  // Throws OutOfMemoryError (naming the device, the allocation and the live buffers) when it does not fit.
  std::uint64_t allocate(Bytes bytes, MemoryTag tag, MemoryLabel label, Seconds now);
  void release(std::uint64_t id, Seconds now);
  void retag(std::uint64_t id, MemoryTag tag, Seconds now);
  // Tells `observer` (null: no one) of every event from now on; it must outlive the ledger or be replaced.
  void observe(MemoryObserver* observer) { observer_ = observer; }

  const std::string& device_name() const { return device_name_; }
  Bytes capacity() const { return capacity_; }
  Bytes in_use() const { return in_use_; }
  const BytesByTag& in_use_by_tag() const { return by_tag_; }
  Bytes peak() const { return peak_; }
  Seconds peak_time() const { return peak_time_; }
  // What the buffers held at the peak, by tag (sums to peak()).
  const BytesByTag& at_peak() const { return at_peak_; }
  // The largest amount each tag reached on its own.
  const BytesByTag& tag_peaks() const { return tag_peaks_; }
  const MemoryTimeline& timeline() const { return timeline_; }

  // A window (one pmap call): its peak starts from what is in use now.
  void start_window();
  Bytes window_peak() const { return window_peak_; }
  const BytesByTag& window_at_peak() const { return window_at_peak_; }
  std::vector<LiveBuffer> live_buffers() const;

 private:
  void record(Seconds now, MemoryTag tag, Bytes delta);

  std::string device_name_;
  Bytes capacity_;
  bool keep_timeline_;
  Bytes in_use_ = 0;
  Bytes peak_ = 0;
  Seconds peak_time_ = 0;
  BytesByTag by_tag_{};
  BytesByTag at_peak_{};
  BytesByTag tag_peaks_{};
  Bytes window_peak_ = 0;
  BytesByTag window_at_peak_{};
  // A buffer as the ledger keeps it.
  struct Slot {
    Bytes bytes;
    Seconds since;
    MemoryLabel label;
    MemoryTag tag;
    bool live;
  };
  // The buffers by id. An id is a slot, reused once released (only its DeviceAllocation holds it, and
  // releases it once), so a simulation with millions of short-lived buffers allocates no node per buffer.
  std::vector<Slot> slots_;
  std::vector<std::uint64_t> free_slots_;
  MemoryTimeline timeline_;
  MemoryObserver* observer_ = nullptr;
};

// The ledger entry of one device buffer; releasing happens when the last Array sharing it goes away.
// Holds the ledger weakly: an array outliving its Simulation releases into nothing. Its size and tag are the
// ledger's: every live buffer of every device has one of these, 48 bytes with its shared_ptr's count.
class DeviceAllocation {
 public:
  DeviceAllocation(const std::shared_ptr<MemoryLedger>& ledger, int device, Bytes bytes, MemoryTag tag,
                   MemoryLabel label);
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;  // one ledger entry, one owner
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  int device() const { return device_; }
  // The buffer's id in its ledger while it lives (a released id is given to a later buffer).
  std::uint64_t id() const { return id_; }
  bool belongs_to(const MemoryLedger& ledger) const { return ledger_.lock().get() == &ledger; }
  void retag(MemoryTag tag);

 private:
  std::weak_ptr<MemoryLedger> ledger_;
  int device_;
  std::uint64_t id_;
};

}  // namespace spmdsim
