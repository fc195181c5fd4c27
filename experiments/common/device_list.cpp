#include "common/device_list.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {

std::vector<int> parse_device_list(const std::string& text, int least) {
  std::vector<int> counts;
  for (const auto& item : split_list(text)) {
    int p = 0;
    if (item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos ||
        (p = std::stoi(item)) < least || p > kMaxDevices)
      throw UsageError(
          fmt::format("--devices: '{}' is not a device count from {} to {}", item, least, kMaxDevices));
    if (std::find(counts.begin(), counts.end(), p) == counts.end()) counts.push_back(p);
  }
  if (counts.empty()) throw UsageError("--devices names no device count");
  return counts;
}

int parse_device_count(const std::string& text, int least) {
  return static_cast<int>(parse_count(text, "--devices", least, kMaxDevices));
}

}  // namespace spmdsim::cli
