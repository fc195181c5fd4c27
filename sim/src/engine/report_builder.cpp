#include "engine/report_builder.hpp"

#include <simgrid/s4u/Engine.hpp>

namespace spmdsim::detail {

SimulationReport ReportBuilder::report() const {
  SimulationReport report;
  report.platform = platform_.description;
  report.config = config_;
  for (const auto& [kind, name] : collectives_.algorithms())
    report.algorithms[std::string(collective_kind_name(kind))] = name;
  report.simulated_time = simgrid::s4u::Engine::get_clock();
  report.calls = calls_;
  report.device_totals.resize(platform_.devices.size());
  for (const auto& call : calls_)
    for (std::size_t i = 0; i < call.devices.size(); ++i)
      report.device_totals[static_cast<std::size_t>(call.devices[i])] += call.times[i];
  for (std::size_t d = 0; d < platform_.devices.size(); ++d) {
    report.device_names.push_back(platform_.devices[d].name);
    const auto& ledger = *ledgers_[d];
    report.memory.push_back({ledger.device_name(), ledger.capacity(), ledger.peak(), ledger.at_peak()});
    report.memory_timelines.push_back(ledger.timeline());
  }
  return report;
}

}  // namespace spmdsim::detail
