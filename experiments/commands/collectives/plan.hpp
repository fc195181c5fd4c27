// The plan of a sweep: which rows to run, with their shapes, and which rows run abstract (shapes only).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "commands/collectives/options.hpp"
#include "common/host_budget.hpp"

namespace spmdsim::cli::collectives {

struct PlannedRow {
  const Collective* collective;
  int p;
  std::string algorithm;
  ByteCount bytes;     // S, rounded down so that every rank's share is whole elements (as nccl-tests does)
  std::int64_t count;  // the count nccl-tests prints: elements per rank in the call's count parameter
  std::int64_t elements_in;  // per device, what the device holds before the call
  bool abstract;
};

struct Plan {
  std::vector<PlannedRow> rows;
  std::map<const Collective*, std::vector<std::string>> notes;  // rows left out, and why
};

Plan make_plan(const SweepOptions& options, ByteCount abstract_above);

struct AbstractThreshold {
  ByteCount bytes;
  std::string source;
};

// The channels the sweep's collectives run on at most: NCCL's ring channels where it runs nccl or nccl_ring on
// a platform carrying NCCL's figures (each channel past the first an actor of its own per device), else 1.
int sweep_channels(const SweepOptions& options);

// What a sweep holds at once at `max_devices` devices, its collectives on `channels` channels, when its real
// rows go up to `largest_real_row` bytes (0: every row abstract).
HostDemand sweep_demand(int max_devices, int channels, ByteCount largest_real_row);

// The largest size (a power of two) whose real rows at `max_devices` fit in half of MemAvailable, the
// address space RLIMIT_AS leaves and the memory maps, with the actors' stacks (host_budget.hpp), and where
// that comes from.
AbstractThreshold default_abstract_threshold(int max_devices, int channels, const ActorContexts& contexts,
                                             HostLimits limits);

// Throws UsageError when the plan's largest real row does not fit (an --abstract-above too large for the
// host), naming the estimate and the --abstract-above that fits.
void check_real_rows_fit(const Plan& plan, int channels, const AbstractThreshold& threshold,
                         const ActorContexts& contexts, const HostLimits& limits);

}  // namespace spmdsim::cli::collectives
