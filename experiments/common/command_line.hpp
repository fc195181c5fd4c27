// What every spmdsim subcommand shares: SimGrid's own arguments kept apart from ours, usage errors, counts
// and lists.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli {

// A mistake on the command line: main prints it with the usage hint and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// argv split in two: SimGrid's --cfg=... / --log=... (with the program name first, as SimGrid wants it)
// and the rest, for Boost.Program_options. Throws UsageError for a --cfg or --log that SimGrid would abort on
// or that spmdsim does not take (check_simgrid_argument).
struct SplitArguments {
  std::vector<std::string> simgrid;
  std::vector<std::string> ours;
};
SplitArguments split_simgrid_arguments(const std::string& program, const std::vector<std::string>& args);

// The settings ("key:value") that a --cfg=key:value among `simgrid_args` sets.
std::vector<std::string> cfg_settings(const std::vector<std::string>& simgrid_args);

// `settings` ("key:value") but those whose key a --cfg among `simgrid_args` sets. SimulationOptions applies
// its settings after the command line's: leaving these out lets the command line win over a preset.
std::vector<std::string> settings_not_overridden(const std::vector<std::string>& settings,
                                                 const std::vector<std::string>& simgrid_args);

// The largest count an option takes unless it says otherwise: nine digits, which fit an int.
inline constexpr std::int64_t kMaxCount = 999'999'999;

// A whole number from `least` to `most`, for `option`; UsageError "--batch must be a whole number from 1 to
// 999999999 (got 'x')" otherwise.
std::int64_t parse_count(const std::string& text, std::string_view option, std::int64_t least,
                         std::int64_t most = kMaxCount);

// A switch given as on or off, for `option`; UsageError "unknown --fusion 'x'; valid: on, off" otherwise.
bool parse_on_off(const std::string& text, std::string_view option);

// The non-empty items of a comma-separated list: "1,2,,4" -> {"1", "2", "4"}.
std::vector<std::string> split_list(const std::string& text);

// argc/argv views of a string vector, alive as long as the vector.
class Argv {
 public:
  explicit Argv(std::vector<std::string>& args);
  int* argc() { return &argc_; }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<char*> pointers_;
  int argc_;
};

}  // namespace spmdsim::cli
