// The report as JSON, for scripts and plots. Everything in SimulationReport is here; times are in seconds and
// sizes in bytes, always as numbers.
//
// Schema (version kReportSchemaVersion; any change to the fields below bumps it):
//   schema_version    int
//   platform          string    the platform's one-line description
//   config            [string]  SimGrid settings in force ("network/model:CM02", ...)
//   algorithms        {collective: algorithm}
//   simulated_time    s
//   memory_tags       [string]  memory tag names; memory_timelines[].tag holds indices into this list
//   devices           [device]  whole simulation, one per device in global order:
//     name            string
//     times           times     summed over the calls the device took part in
//     memory          memory    whole-simulation peak
//   calls             [call]    in simulated order:
//     name            string    the pmap's name, or "device_get" for a host read
//     start, end      s
//     replayed        bool      the function ran once and every device replayed it (PmapOptions::trace_once)
//     devices         [call device]  in call order:
//       index         int       global device index (into devices)
//       times         times
//       memory        memory    peak within the call; absent for device_get, which allocates nothing
//       spans         [{kind: "compute" | "communication" | "transfer", name: string, start: s, end: s,
//                      track: "program" | "stream"}]
//   memory_timelines  [{device: string, time: [s], in_use: [bytes], tag: [int], delta: [bytes]}]
//                     one per device; the arrays are parallel, one entry per allocation (delta > 0) or
//                     release (delta < 0), in_use being the total after it. Columns rather than one object
//                     per event keep a long run's file small.
// times:  {compute: s, communication: {collective: s}, communication_total: s, transfer: s (host <-> device),
//          idle: s, bytes_sent: bytes (to other devices),
//          stream: {collective: s}, stream_total: s, stream_waits: s, hidden_communication: s}
//          communication is exposed: the time the program was blocked in each collective (the wait() of an
//          asynchronous one); stream is the asynchronous collectives' time on the communication stream,
//          stream_waits the program's waits for them, hidden_communication = stream_total - stream_waits.
// Version 2 added the stream fields and the spans' track, version 3 the calls' replayed.
// memory: {capacity: bytes, peak: bytes, at_peak: {tag name: bytes, every tag}}
#include <string>

#include "report/units_format.hpp"
#include "spmdsim/report_writers.hpp"

namespace spmdsim {
namespace {

// Ordered so that the written file reads in schema order, schema_version first.
using Json = nlohmann::ordered_json;

Json by_collective(const std::map<std::string, Seconds>& times) {
  Json out = Json::object();
  for (const auto& [name, seconds] : times) out[name] = seconds;
  return out;
}

Json times_json(const DeviceTimes& times) {
  return {{"compute", times.compute},
          {"communication", by_collective(times.communication)},
          {"communication_total", times.communication_total()},
          {"transfer", times.transfer},
          {"idle", times.idle},
          {"bytes_sent", times.bytes_sent},
          {"stream", by_collective(times.stream)},
          {"stream_total", times.stream_total()},
          {"stream_waits", times.stream_waits},
          {"hidden_communication", times.hidden_communication()}};
}

Json memory_json(const DeviceMemory& memory) {
  Json at_peak = Json::object();
  for (const MemoryTag tag : memory_tags())
    at_peak[std::string(memory_tag_name(tag))] = memory.at_peak[tag.index()];
  return {{"capacity", memory.capacity}, {"peak", memory.peak}, {"at_peak", at_peak}};
}

Json spans_json(const std::vector<Span>& spans) {
  Json out = Json::array();
  for (const auto& span : spans)
    out.push_back({{"kind", span_kind_name(span.kind)},
                   {"name", span.name},
                   {"start", span.start},
                   {"end", span.end},
                   {"track", track_name(span.track)}});
  return out;
}

Json call_json(const CallReport& call) {
  Json devices = Json::array();
  for (std::size_t i = 0; i < call.devices.size(); ++i) {
    Json device = {{"index", call.devices[i]}, {"times", times_json(call.times[i])}};
    if (!call.memory.empty()) device["memory"] = memory_json(call.memory[i]);
    device["spans"] = spans_json(call.spans[i]);
    devices.push_back(std::move(device));
  }
  return {{"name", call.name},
          {"start", call.start},
          {"end", call.end},
          {"replayed", call.replayed},
          {"devices", std::move(devices)}};
}

Json timeline_json(const std::string& device, const MemoryTimeline& events) {
  Json time = Json::array(), in_use = Json::array(), tag = Json::array(), delta = Json::array();
  for (const auto& event : events) {
    time.push_back(event.time);
    in_use.push_back(event.in_use);
    tag.push_back(static_cast<int>(event.tag.index()));
    delta.push_back(event.delta);
  }
  return {{"device", device}, {"time", time}, {"in_use", in_use}, {"tag", tag}, {"delta", delta}};
}

Json build(const SimulationReport& report) {
  Json tags = Json::array();
  for (const MemoryTag tag : memory_tags()) tags.push_back(memory_tag_name(tag));
  Json devices = Json::array();
  for (std::size_t d = 0; d < report.device_names.size(); ++d)
    devices.push_back({{"name", report.device_names[d]},
                       {"times", times_json(report.device_totals[d])},
                       {"memory", memory_json(report.memory[d])}});
  Json calls = Json::array();
  for (const auto& call : report.calls) calls.push_back(call_json(call));
  Json timelines = Json::array();
  for (std::size_t d = 0; d < report.memory_timelines.size(); ++d)
    timelines.push_back(timeline_json(report.device_names[d], report.memory_timelines[d]));

  Json out = Json::object();
  out["schema_version"] = report.schema_version;
  out["platform"] = report.platform;
  out["config"] = report.config;
  out["algorithms"] = report.algorithms;
  out["simulated_time"] = report.simulated_time;
  out["memory_tags"] = std::move(tags);
  out["devices"] = std::move(devices);
  out["calls"] = std::move(calls);
  out["memory_timelines"] = std::move(timelines);
  return out;
}

}  // namespace

nlohmann::json report_to_json(const SimulationReport& report) {
  return nlohmann::json(build(report));
}

void write_report_json(std::ostream& out, const SimulationReport& report) {
  out << build(report).dump() << '\n';
}

}  // namespace spmdsim
