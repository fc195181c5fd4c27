// The results model of a simulation: where each device's time went and how much memory it held. Kept
// apart from the reporters (report_table.cpp, report_json.cpp) that print it.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/memory.hpp"
#include "spmdsim/shared_vector.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

inline constexpr int kReportSchemaVersion = 3;

enum class SpanKind { compute, communication, transfer };
// One spelling for the JSON "kind" of a span and the Chrome-trace category.
std::string_view span_kind_name(SpanKind kind);

// Which of a device's two timelines a span is on: its program (the pmapped function's actor) or its
// communication stream (the asynchronous collectives of async_collectives.hpp).
enum class Track { program, stream };
std::string_view track_name(Track track);

// One interval of a device's timeline (trace material).
struct Span {
  SpanKind kind;
  std::string name;
  Seconds start;
  Seconds end;
  Track track = Track::program;
};

struct DeviceTimes {
  Seconds compute = 0;
  Seconds transfer = 0;  // host <-> device
  // Exposed communication, per collective (psum, all_gather, ...): the time the device's program was blocked
  // in it, the whole of a synchronous collective and the wait() of an asynchronous one.
  std::map<std::string, Seconds> communication;
  // Asynchronous collectives' whole time on the device's communication stream, per collective.
  std::map<std::string, Seconds> stream;
  Seconds stream_waits = 0;  // the part of the exposed communication spent waiting for the stream
  Seconds idle = 0;      // the rest of the interval the device was part of
  Bytes bytes_sent = 0;  // to other devices

  Seconds communication_total() const;  // exposed
  Seconds stream_total() const;
  // Stream time the program did not wait for: communication hidden behind the program's own work.
  Seconds hidden_communication() const;
  // Exposed plus hidden: every collective's time.
  Seconds all_communication() const;
  DeviceTimes& operator+=(const DeviceTimes& other);
};

struct DeviceMemory {
  std::string device;
  Bytes capacity = 0;
  Bytes peak = 0;
  BytesByTag at_peak{};  // what the buffers held at the peak, by tag
};

// One pmap call, or a host<->device transfer phase.
struct CallReport {
  std::string name;
  Seconds start = 0;
  Seconds end = 0;
  std::vector<int> devices;             // global indices, in call order
  std::vector<DeviceTimes> times;       // parallel to devices
  std::vector<DeviceMemory> memory;     // parallel to devices: peaks within this call
  std::vector<SharedVector<Span>> spans;  // parallel to devices
  // The call's function ran once and every device replayed it (PmapOptions::trace_once).
  bool replayed = false;
};

struct SimulationReport {
  int schema_version = kReportSchemaVersion;
  std::string platform;
  std::vector<std::string> config;      // SimGrid settings in force (network model, ...)
  std::map<std::string, std::string> algorithms;  // collective -> algorithm
  Seconds simulated_time = 0;
  std::vector<CallReport> calls;
  std::vector<std::string> device_names;
  std::vector<DeviceTimes> device_totals;  // over the whole simulation
  std::vector<DeviceMemory> memory;        // whole-simulation peaks
  std::vector<MemoryTimeline> memory_timelines;  // per device, every allocation and release
};

}  // namespace spmdsim
