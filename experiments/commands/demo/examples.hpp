// The pmap tutorials' data-parallel examples, one after the other on one simulated timeline: in_axes and
// out_axes, static arguments, a subset of devices, psum / pmean / all_gather and a data-parallel training
// loop.
#pragma once

#include <ostream>

#include "spmdsim/simulation.hpp"

namespace spmdsim::cli::demo {

// Runs the examples on the `n` devices of `sim` and prints each result to `out` as numpy would.
void run_examples(Simulation& sim, int n, std::ostream& out);

}  // namespace spmdsim::cli::demo
