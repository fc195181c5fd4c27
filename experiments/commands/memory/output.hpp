// `spmdsim memory`'s reporters: the header, the table and CSV of the steps (over common/rows.hpp), their JSON
// (with device 0's timelines), and --fit's table, CSV and JSON.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands/memory/fit_search.hpp"
#include "commands/memory/memory_run.hpp"
#include "commands/memory/options.hpp"
#include "common/rows.hpp"

namespace spmdsim::cli::memory {

// One step of a model and strategy.
struct Row {
  std::string model;
  models::Strategy strategy = models::Strategy::dp;
  MemoryMeasurement measurement;
  double zero_formula = 0;  // bytes
};

// --fit: one line per model and strategy, with the runs of the search by value.
struct FitRow {
  std::string model;
  models::Strategy strategy = models::Strategy::dp;
  FitBounds search;
  std::map<std::int64_t, MemoryMeasurement> runs;

  const MemoryMeasurement* at_largest() const { return search.largest ? &runs.at(*search.largest) : nullptr; }
  const MemoryMeasurement* at_failing() const {
    return search.first_failing ? &runs.at(*search.first_failing) : nullptr;
  }
  // A run's platform figures (the capacity): every run has them.
  const MemoryMeasurement& any_run() const { return runs.begin()->second; }
};

// The options, platform and settings of the run (`first`, the first step's measurement).
void write_header(std::ostream& out, const MemoryCommandOptions& options, const std::string& simgrid_source,
                  const MemoryMeasurement& first);

// The steps as the table shows them and CSV writes them.
Rows step_rows(const std::vector<Row>& rows);
// The legend, the table, then each out-of-memory row's message.
void write_table(std::ostream& out, const std::vector<Row>& rows);

// What the JSON of a run and of a search share.
nlohmann::ordered_json command_json(const MemoryCommandOptions& options,
                                    const std::vector<std::string>& simgrid_args,
                                    const MemoryMeasurement& first, double wall_seconds);
void write_json(std::ostream& out, nlohmann::ordered_json j, const MemoryCommandOptions& options,
                const std::vector<Row>& rows);

// --fit: a row per model and strategy, as the table shows them and CSV writes them.
Rows fit_rows(const MemoryCommandOptions& options, const std::vector<FitRow>& rows);
void write_fit_table(std::ostream& out, const MemoryCommandOptions& options, const std::vector<FitRow>& rows);
void write_fit_json(std::ostream& out, nlohmann::ordered_json j, const MemoryCommandOptions& options,
                    const std::vector<FitRow>& rows);

}  // namespace spmdsim::cli::memory
