// Device memory accounting. SimGrid has no memory resource, so every device buffer is an entry in its
// device's ledger from allocation to release (RAII: the buffer's last Array handle going away releases
// it), tagged with what it holds. Going past capacity is an OutOfMemoryError.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/shared_vector.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

enum class MemoryTag : std::uint8_t {
  replicated_args,  // pmap arguments with in_axes None: one full copy per device
  input_shards,     // pmap arguments split along a mapped axis
  outputs,          // pmap results
  collective_scratch,
  temporaries,
  parameters,
  optimizer_state,
  gradients,
  activations,
  communication_buckets,  // gradients flattened into one buffer per bucket for an overlapped all-reduce
};
inline constexpr int kNumMemoryTags = 10;
std::string_view memory_tag_name(MemoryTag tag);

struct MemoryEvent {
  Seconds time;
  Bytes in_use;  // after the event
  MemoryTag tag;
  Bytes delta;   // positive: allocation, negative: release
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

// One device's buffers over simulated time.
class MemoryLedger {
 public:
  MemoryLedger(std::string device_name, Bytes capacity);

  // Throws OutOfMemoryError (naming the device, the allocation and the live buffers) when it does not fit.
  std::uint64_t allocate(Bytes bytes, MemoryTag tag, std::string label, Seconds now);
  void release(std::uint64_t id, Seconds now);
  void retag(std::uint64_t id, MemoryTag tag, Seconds now);

  const std::string& device_name() const { return device_name_; }
  Bytes capacity() const { return capacity_; }
  Bytes in_use() const { return in_use_; }
  Bytes peak() const { return peak_; }
  Seconds peak_time() const { return peak_time_; }
  // What the buffers held at the peak, by tag (sums to peak()).
  const std::array<Bytes, kNumMemoryTags>& at_peak() const { return at_peak_; }
  // The largest amount each tag reached on its own.
  const std::array<Bytes, kNumMemoryTags>& tag_peaks() const { return tag_peaks_; }
  const MemoryTimeline& timeline() const { return timeline_; }

  // A window (one pmap call): its peak starts from what is in use now.
  void start_window();
  Bytes window_peak() const { return window_peak_; }
  const std::array<Bytes, kNumMemoryTags>& window_at_peak() const { return window_at_peak_; }
  std::vector<LiveBuffer> live_buffers() const;

 private:
  void record(Seconds now, MemoryTag tag, Bytes delta);

  std::string device_name_;
  Bytes capacity_;
  Bytes in_use_ = 0;
  Bytes peak_ = 0;
  Seconds peak_time_ = 0;
  std::array<Bytes, kNumMemoryTags> by_tag_{};
  std::array<Bytes, kNumMemoryTags> at_peak_{};
  std::array<Bytes, kNumMemoryTags> tag_peaks_{};
  Bytes window_peak_ = 0;
  std::array<Bytes, kNumMemoryTags> window_at_peak_{};
  // The live buffers by id. An id is a slot, reused once released (only its DeviceAllocation holds it, and
  // releases it once), so a simulation with millions of short-lived buffers allocates no node per buffer.
  std::vector<std::optional<LiveBuffer>> slots_;
  std::vector<std::uint64_t> free_slots_;
  MemoryTimeline timeline_;
};

// The ledger entry of one device buffer; releasing happens when the last Array sharing it goes away.
// Holds the ledger weakly: an array outliving its Simulation releases into nothing.
class DeviceAllocation {
 public:
  DeviceAllocation(std::shared_ptr<MemoryLedger> ledger, int device, Bytes bytes, MemoryTag tag,
                   std::string label);
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;  // one ledger entry, one owner
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  int device() const { return device_; }
  Bytes bytes() const { return bytes_; }
  MemoryTag tag() const { return tag_; }
  void retag(MemoryTag tag);

 private:
  std::weak_ptr<MemoryLedger> ledger_;
  int device_;
  Bytes bytes_;
  MemoryTag tag_;
  std::uint64_t id_;
};

}  // namespace spmdsim
