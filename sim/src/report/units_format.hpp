// How the reporters (and error messages) spell quantities: durations and sizes as people read them
// ("12.0 us", "1.5 MiB"). The engine keeps SI units; only output picks a unit, and every reporter picks it here
// so the same quantity always reads the same.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "spmdsim/report.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// `value` rounded to `decimals` as it will print, so that float noise just below zero (an idle time of
// -1e-20 s left by a subtraction) prints as 0.0 rather than -0.0.
inline double as_printed(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale + 0.0;  // + 0.0 turns -0.0 into 0.0
}

// us below a millisecond, ms below a second, then s; the decimals keep about three significant digits.
inline std::string format_duration(Seconds seconds) {
  const double magnitude = std::abs(seconds);
  if (magnitude < 1e-3) return fmt::format("{:.1f} us", as_printed(seconds * 1e6, 1));
  if (magnitude < 1) return fmt::format("{:.2f} ms", as_printed(seconds * 1e3, 2));
  return fmt::format("{:.3f} s", as_printed(seconds, 3));
}

inline std::string format_percent(double percent) {
  return fmt::format("{:.1f}%", as_printed(percent, 1));
}

// Binary prefixes, as device memory capacities are quoted.
inline std::string format_bytes(Bytes bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (std::abs(bytes) < 1024) return fmt::format("{:.0f} B", as_printed(bytes, 0));
  double value = bytes / 1024;
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", as_printed(value, 1), kUnits[unit]);
}

}  // namespace spmdsim::detail
