#include "spmdsim/report.hpp"

namespace spmdsim {

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
