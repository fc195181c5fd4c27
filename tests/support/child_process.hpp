// Running a simulation in a child process: SimGrid has one engine and clock per process, so a test that
// compares two simulations runs one of them (or both) through here.
#pragma once

#include <functional>
#include <vector>

namespace spmdsim::testing {

// Forks, runs `fn` in the child and returns the numbers it returned. Throws std::runtime_error when the
// child throws, crashes or returns nothing.
std::vector<double> in_child_process(const std::function<std::vector<double>()>& fn);

}  // namespace spmdsim::testing
