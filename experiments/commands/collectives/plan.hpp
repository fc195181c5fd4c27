// The plan of a sweep: which rows to run, with their shapes, and which rows run abstract (shapes only).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "commands/collectives/options.hpp"

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

// The largest size whose real data fits in half of MemAvailable at `max_devices`, and where it comes from.
AbstractThreshold default_abstract_threshold(int max_devices);

}  // namespace spmdsim::cli::collectives
