// Every benchmark configuration runs in a process of its own: SimGrid allows one engine (one clock) per
// process, and peak RSS is per process. A benchmark's parent runs the program again (fork, then exec of
// /proc/self/exe: a fresh image whose VmHWM counts only its own pages, and no state shared with SimGrid's
// contexts) as `<program> --one <configuration> ...`; the child prints one result line,
// "<tag> key=value key=value ...", which the parent reads back.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::benchmarks {

using ResultFields = std::map<std::string, double, std::less<>>;

struct ChildRequest {
  std::string program;             // the child's argv[0]
  std::string configuration;       // the argument of --one
  std::vector<std::string> extra;  // arguments after it
  std::string result_tag;          // the first word of the result line
  std::vector<std::string> keys;   // the fields the result line must carry
  double time_limit_s = 0;         // wall seconds before the child is killed; 0: no limit
};

struct ChildRun {
  enum class Outcome { finished, failed, timed_out };
  Outcome outcome = Outcome::failed;
  std::string failure;  // why it did not finish, with the child's output (stdout and stderr together)
  ResultFields fields;  // the result line's, every requested key present, when finished
};

ChildRun run_child(const ChildRequest& request);

// Parses "<tag> key=value ..."; throws std::runtime_error for a token without '='.
ResultFields parse_result_line(std::string_view line, std::string_view tag);

// The main() of a benchmark: `--one <configuration> [args]` calls child(configuration, argv) with
// argv = {argv[0], args..., nullptr} (the form SimGrid parses its --cfg and --log from); anything else calls
// parent(args). An exception escaping either prints "<program>: <what>" to stderr and gives exit status 2.
using ChildMain = std::function<int(const std::string& configuration, std::vector<char*> argv)>;
using ParentMain = std::function<int(const std::vector<std::string>& args)>;
int benchmark_main(int argc, char** argv, std::string_view program, const ChildMain& child,
                   const ParentMain& parent);

}  // namespace spmdsim::benchmarks
