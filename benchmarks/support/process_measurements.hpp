// What a benchmark reads about its own process and about the machine it runs on, from the clock and /proc.
#pragma once

#include <string>
#include <vector>

namespace spmdsim::benchmarks {

// The process's CPU time (CLOCK_PROCESS_CPUTIME_ID: user + system), in seconds.
double process_cpu_seconds();
// VmHWM of /proc/self/status: the process's peak resident set so far, in bytes.
double peak_rss_bytes();
// MemAvailable of /proc/meminfo, in bytes.
double mem_available_bytes();

// The three load averages of /proc/loadavg, e.g. "1.52 2.03 2.40".
std::string load_average();
// The first "model name" of /proc/cpuinfo, or "unknown".
std::string cpu_model();

// The median of the values (the mean of the middle two for an even count); values must not be empty.
double median(std::vector<double> values);

}  // namespace spmdsim::benchmarks
