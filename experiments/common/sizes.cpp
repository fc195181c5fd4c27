#include "common/sizes.hpp"

#include <iterator>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {

ByteCount parse_size(const std::string& text, std::string_view option) {
  const auto bad = [&] {
    return UsageError(
        fmt::format("bad size '{}' for {}: expected a whole number of bytes with an optional K, M or G "
                    "suffix (powers of 1024), "
                    "e.g. 64K",
                    text, option));
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || text.size() > digits + 1) throw bad();
  int shift = 0;
  if (text.size() == digits + 1) {
    switch (text.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      default:
        throw bad();
    }
  }
  constexpr ByteCount kLargest = ByteCount{1} << 50;  // 1 PiB: far beyond any device, far from overflow
  if (digits > 16 || std::stoull(text.substr(0, digits)) > (kLargest >> shift))
    throw UsageError(fmt::format("size '{}' for {} is too large (at most 1048576G)", text, option));
  return std::stoull(text.substr(0, digits)) << shift;
}

std::string size_text(ByteCount bytes) {
  constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

}  // namespace spmdsim::cli
