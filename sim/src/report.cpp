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

Seconds DeviceTimes::communication_total() const {
  Seconds total = 0;
  for (const auto& [name, t] : communication) total += t;
  return total;
}

DeviceTimes& DeviceTimes::operator+=(const DeviceTimes& other) {
  compute += other.compute;
  transfer += other.transfer;
  idle += other.idle;
  bytes_sent += other.bytes_sent;
  for (const auto& [name, t] : other.communication) communication[name] += t;
  return *this;
}

}  // namespace spmdsim
