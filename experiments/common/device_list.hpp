// The device counts a command runs on, as --devices gives them: "1,2,4", or "8" where it runs one.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::cli {

// The largest device count a command runs on: 2^17, the scale of today's largest training runs
// (docs/performance.md, "131,072 devices").
inline constexpr int kMaxDevices = 131072;

// The counts of a comma-separated list, in the order given, each once. Throws UsageError for an item that is
// no whole number from `least` to kMaxDevices ("--devices: '1' is not a device count from 2 to 131072") and
// for a list of no count.
std::vector<int> parse_device_list(const std::string& text, int least);

// One count, from `least` to kMaxDevices. Throws UsageError "--devices must be a whole number from 1 to
// 131072 (got 'x')" otherwise.
int parse_device_count(const std::string& text, int least);

}  // namespace spmdsim::cli
