#include "process_measurements.hpp"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace spmdsim::benchmarks {
namespace {

// A /proc/self/status or /proc/meminfo field in bytes ("VmHWM:  1234 kB").
double proc_kib_field(const char* file, std::string_view field) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':')
      return std::stod(line.substr(field.size() + 1)) * 1024.0;
  throw std::runtime_error(fmt::format("no {} in {}", field, file));
}

}  // namespace

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double peak_rss_bytes() {
  return proc_kib_field("/proc/self/status", "VmHWM");
}

double mem_available_bytes() {
  return proc_kib_field("/proc/meminfo", "MemAvailable");
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name")) return line.substr(line.find(':') + 2);
  return "unknown";
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace spmdsim::benchmarks
