// The simulation's report, built from the calls recorded so far and the state the report shows alongside
// them: the platform, the SimGrid settings, the collective algorithms and the devices' memory ledgers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/collective_settings.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/platform.hpp"
#include "spmdsim/report.hpp"

namespace spmdsim::detail {

class ReportBuilder {
 public:
  ReportBuilder(const Platform& platform, const std::vector<std::string>& config,
                const CollectiveSettings& collectives,
                const std::vector<std::shared_ptr<MemoryLedger>>& ledgers)
      : platform_(platform), config_(config), collectives_(collectives), ledgers_(ledgers) {}

  void add_call(CallReport call) { calls_.push_back(std::move(call)); }
  SimulationReport report() const;

 private:
  const Platform& platform_;
  const std::vector<std::string>& config_;
  const CollectiveSettings& collectives_;
  const std::vector<std::shared_ptr<MemoryLedger>>& ledgers_;
  std::vector<CallReport> calls_;
};

}  // namespace spmdsim::detail
