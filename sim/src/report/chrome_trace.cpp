// The report as a Chrome trace (Trace Event Format), for chrome://tracing and ui.perfetto.dev: each device is
// a process (pid = global device index) with one thread per track: tid 0 its program's compute,
// communication and transfer spans, tid 1 its communication stream's collectives (async_collectives.hpp),
// which overlap the program's spans; its memory in use is a counter track. Within a track spans never
// overlap.
#include <set>
#include <string>

#include "report/units_format.hpp"
#include "spmdsim/report_writers.hpp"

namespace spmdsim {
namespace {

using Json = nlohmann::json;

// The format counts in microseconds.
double micros(Seconds seconds) {
  return seconds * 1e6;
}

Json process_name(int pid, const std::string& device) {
  return {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", device}}}};
}

int thread_of(Track track) {
  return track == Track::program ? 0 : 1;
}

Json thread_name(int pid, Track track) {
  return {{"ph", "M"},
          {"name", "thread_name"},
          {"pid", pid},
          {"tid", thread_of(track)},
          {"args", {{"name", track == Track::program ? "program" : "communication stream"}}}};
}

Json complete_event(int pid, const Span& span, const std::string& call) {
  return {{"ph", "X"},
          {"name", span.name},
          {"cat", span_kind_name(span.kind)},
          {"pid", pid},
          {"tid", thread_of(span.track)},
          {"ts", micros(span.start)},
          {"dur", micros(span.end - span.start)},
          {"args", {{"call", call}}}};
}

Json memory_counter(int pid, const MemoryEvent& event) {
  return {{"ph", "C"},
          {"name", "memory"},
          {"pid", pid},
          {"ts", micros(event.time)},
          {"args", {{"bytes", event.in_use}}}};
}

}  // namespace

void write_chrome_trace(std::ostream& out, const SimulationReport& report) {
  Json events = Json::array();
  for (std::size_t d = 0; d < report.device_names.size(); ++d)
    events.push_back(process_name(static_cast<int>(d), report.device_names[d]));
  std::set<int> with_stream;  // devices whose stream ran something: both their threads get a name
  for (const auto& call : report.calls)
    for (std::size_t i = 0; i < call.devices.size(); ++i)
      for (const auto& span : call.spans[i]) {
        events.push_back(complete_event(call.devices[i], span, call.name));
        if (span.track == Track::stream) with_stream.insert(call.devices[i]);
      }
  for (int pid : with_stream)
    for (Track track : {Track::program, Track::stream}) events.push_back(thread_name(pid, track));
  for (std::size_t d = 0; d < report.memory_timelines.size(); ++d)
    for (const auto& event : report.memory_timelines[d])
      events.push_back(memory_counter(static_cast<int>(d), event));
  out << Json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}}.dump() << '\n';
}

}  // namespace spmdsim
