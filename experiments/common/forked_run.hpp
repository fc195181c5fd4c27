// One simulation per child process. SimGrid has one engine and one clock per process, so a command that
// runs several simulations (one per device count) forks a child for each. The parent never creates an
// engine itself, so each child starts from a process that SimGrid has not touched.
#pragma once

#include <functional>
#include <string>

namespace spmdsim::cli {

// Forks, runs `work` in the child and returns the text it returned. The child's stdout is not the
// parent's table: only what `work` returns comes back. A UsageError thrown in the child is thrown again
// here as a UsageError with the same message; any other exception, or a child that dies, becomes a
// std::runtime_error with its message (or the signal), prefixed by `what`.
std::string run_in_child(const std::string& what, const std::function<std::string()>& work);

}  // namespace spmdsim::cli
