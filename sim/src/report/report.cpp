#include "spmdsim/report.hpp"

#include <stdexcept>

namespace spmdsim {

std::string_view span_kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::compute: return "compute";
    case SpanKind::communication: return "communication";
    case SpanKind::transfer: return "transfer";
  }
  throw std::logic_error("unreachable: unknown span kind");
}

std::string_view track_name(Track track) {
  return track == Track::program ? "program" : "stream";
}

namespace {

Seconds sum_of(const std::map<std::string, Seconds>& times) {
  Seconds total = 0;
  for (const auto& [name, t] : times) total += t;
  return total;
}

}  // namespace

Seconds DeviceTimes::communication_total() const {
  return sum_of(communication);
}

Seconds DeviceTimes::stream_total() const {
  return sum_of(stream);
}

// The program waits only while the stream is busy, so the waits lie within the stream's time.
Seconds DeviceTimes::hidden_communication() const {
  return stream_total() - stream_waits;
}

Seconds DeviceTimes::all_communication() const {
  return communication_total() + hidden_communication();
}

DeviceTimes& DeviceTimes::operator+=(const DeviceTimes& other) {
  compute += other.compute;
  transfer += other.transfer;
  idle += other.idle;
  bytes_sent += other.bytes_sent;
  stream_waits += other.stream_waits;
  for (const auto& [name, t] : other.communication) communication[name] += t;
  for (const auto& [name, t] : other.stream) stream[name] += t;
  return *this;
}

}  // namespace spmdsim
