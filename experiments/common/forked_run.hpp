// One simulation per child process. SimGrid has one engine and one clock per process, so a command that
// runs several simulations (one per device count) forks a child for each. The parent never creates an
// engine itself, so each child starts from a process that SimGrid has not touched.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace spmdsim::cli {

// Forks, runs `work` in the child and returns the text it returned. The child's stdout is not the
// parent's table: only what `work` returns comes back. A UsageError thrown in the child is thrown again
// here as a UsageError with the same message; any other exception, or a child that dies, becomes a
// std::runtime_error with its message (or the signal), prefixed by `what`.
std::string run_in_child(const std::string& what, const std::function<std::string()>& work);

// A simulation to run in a child: `work` as run_in_child runs it, `what` naming it in errors.
struct ChildRun {
  std::string what;
  std::function<std::string()> work;
};

// Runs each of `runs` in its own child, up to `parallel` at once, and returns their texts in the runs'
// order, whichever ends first; `ended` (if set) is told how many have ended after each. When runs fail,
// every run still ends and the first failing run's error in the runs' order is thrown, as run_in_child
// throws it.
std::vector<std::string> run_in_children(const std::vector<ChildRun>& runs, int parallel,
                                         const std::function<void(std::size_t)>& ended);

}  // namespace spmdsim::cli
