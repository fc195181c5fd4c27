// `spmdsim train`'s reporters: the table, CSV and JSON of the runs, over one row model (common/rows.hpp).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "commands/train/options.hpp"
#include "commands/train/training_run.hpp"
#include "common/rows.hpp"

namespace spmdsim::cli::train {

// A row per device count: its result, its throughput (samples per second of simulated time) and its
// efficiency (throughput per device against the smallest count's).
Rows training_rows(const std::vector<TrainingResult>& results);

// The header (options, platform and settings of `first`, the smallest count's run), then the rows.
void write_table(std::ostream& out, const TrainCommandOptions& options, const std::string& simgrid_source,
                 const TrainingResult& first, const Rows& rows);

void write_json(std::ostream& out, const TrainCommandOptions& options,
                const std::vector<std::string>& simgrid_args, const TrainingResult& first, const Rows& rows,
                double wall_seconds);

}  // namespace spmdsim::cli::train
