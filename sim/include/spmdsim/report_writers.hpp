// Reporters: the same SimulationReport as a human-readable table, as JSON (with the schema version) and as
// a Chrome-trace / Perfetto timeline. They only print; the results model is report.hpp.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "spmdsim/report.hpp"

namespace spmdsim {

// Per call and per device: compute, communication (per collective), host transfers, idle; then per
// device memory peaks by tag against capacity.
void write_report_table(std::ostream& out, const SimulationReport& report);

nlohmann::json report_to_json(const SimulationReport& report);
void write_report_json(std::ostream& out, const SimulationReport& report);

// Chrome trace event format (chrome://tracing, ui.perfetto.dev): one track per device with its compute,
// communication and transfer spans, memory in use per device as a counter track.
void write_chrome_trace(std::ostream& out, const SimulationReport& report);

}  // namespace spmdsim
