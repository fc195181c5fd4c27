// Running one planned row: its input data, its collective in a pmap, its time from the call's report; each
// row in a process of its own, from the same start.
#pragma once

#include <optional>

#include "commands/collectives/plan.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::cli::collectives {

// The seed of every row's random input.
inline constexpr unsigned kSeed = 1;

// Uniform values, the same for a row's collective, device count and size whatever else the sweep runs:
// floats in [-1, 1), integers in [-100, 100].
Array random_input(const PlannedRow& row, DType dtype);

struct RowResult {
  PlannedRow row;
  Seconds time = 0;  // the collective on its slowest device
  double algbw = 0;  // GB/s (1e9 bytes per second, as nccl-tests)
  double busbw = 0;
  double bus_factor = 0;
  std::optional<double> max_error;  // with --check, on real data
  std::optional<NcclChoice> nccl;  // nccl_ring's or nccl's choice, on a platform with NCCL's figures
  Seconds simulated = 0;               // the simulated time the row took, its host transfers with it
};

// Runs `row` on `input` (one array of (p, elements_in)) in `sim`; with `check`, compares a real row's result
// with the float64 reference.
// `options` are the simulation's (for nccl_ring's and nccl's choice).
RowResult run_row(Simulation& sim, const PlannedRow& row, const Array& input, bool check,
                  const SimulationOptions& options);

// run_row in a child process forked from `sim` as it stands: every row starts from the same simulated clock
// and state, so that its figures, to the last bit, are the same whichever rows ran before it (a --shard runs
// a slice of the rows). `sim` itself does not move.
RowResult run_row_in_child(Simulation& sim, const PlannedRow& row, const Array& input, bool check,
                           const SimulationOptions& options);

}  // namespace spmdsim::cli::collectives
