// check_simgrid_argument and actor_contexts (simgrid_arguments.hpp): SimGrid 3.32's settings that shape a
// spmdsim run, each with the values SimGrid accepts for it and that a spmdsim platform can run under.
#include "spmdsim/simgrid_arguments.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

enum class Kind { choice, boolean, number, integer };

struct Setting {
  std::string_view key;
  Kind kind;
  std::vector<std::string_view> choices = {};  // Kind::choice: SimGrid's names that spmdsim can run under
  double least = 0;                            // Kind::number and Kind::integer
  bool least_included = true;
  double most = INFINITY;
  std::string_view note = {};  // why some of SimGrid's values are left out, or the unit
};

// The smallest actor stack spmdsim takes: `spmdsim train`'s MLP step (Eigen puts temporaries of up to 128 KiB
// on the stack, EIGEN_STACK_ALLOCATION_LIMIT) overflows a 256 KiB stack (SIGSEGV) and runs on 512 KiB; twice
// that leaves room for a user's deeper program. At 1 KiB every actor crashes at once.
constexpr double kMinStackKiB = 1024;
// SimGrid multiplies contexts/stack-size (KiB) by 1024 and contexts/guard-size (pages) by the page size
// in an int.
constexpr double kMaxStackKiB = INT_MAX / 1024;

long page_size() {
  return ::sysconf(_SC_PAGESIZE);
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      // src/surf/surf_interface.cpp, surf_network_model_description.
      {"network/model",
       Kind::choice,
       {"LV08", "CM02", "SMPI", "IB"},
       0,
       true,
       INFINITY,
       "SimGrid's Constant model refuses every link and ns-3 needs ns-3's own platforms"},
      {"host/model", Kind::choice, {"default", "compound", "ptask_L07"}},
      {"cpu/model", Kind::choice, {"Cas01"}},
      // surf_optimization_mode_description.
      {"network/optim", Kind::choice, {"Lazy", "TI", "Full"}},
      {"cpu/optim", Kind::choice, {"Lazy", "TI", "Full"}},
      // src/kernel/resource/NetworkModel.cpp and src/simgrid/sg_config.cpp.
      {"network/crosstraffic", Kind::boolean},
      {"network/TCP-gamma", Kind::number, {}, 0, true, INFINITY, "bytes; 0 turns the TCP window off"},
      {"network/latency-factor", Kind::number, {}, 0, true},
      {"network/bandwidth-factor", Kind::number, {}, 0, false},
      {"network/weight-S", Kind::number, {}, 0, true},
      {"network/loopback-lat", Kind::number, {}, 0, true, INFINITY, "seconds"},
      {"network/loopback-bw", Kind::number, {}, 0, false, INFINITY, "bytes per second"},
      {"network/maxmin-selective-update", Kind::boolean},
      {"cpu/maxmin-selective-update", Kind::boolean},
      {"maxmin/precision", Kind::number, {}, 0, false},
      {"surf/precision", Kind::number, {}, 0, false, INFINITY, "seconds"},
      // src/kernel/EngineImpl.cpp, context_factories (all four are built into Debian's libsimgrid 3.32).
      {"contexts/factory", Kind::choice, {"raw", "ucontext", "boost", "thread"}},
      {"contexts/stack-size",
       Kind::integer,
       {},
       kMinStackKiB,
       true,
       kMaxStackKiB,
       "KiB; a training step's Eigen kernels overflow 256 KiB"},
      {"contexts/guard-size",
       Kind::integer,
       {},
       0,
       true,
       static_cast<double>(INT_MAX / page_size()),
       "pages"},
  };
  return table;
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> names;
  for (const auto& s : settings()) names.push_back(s.key);
  return names;
}

std::optional<double> parse_double(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || errno == ERANGE || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// As SimGrid reads an int: strtol in base 0 ("0x10" is 16).
std::optional<long> parse_long(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 0);
  if (text.empty() || errno == ERANGE || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::string range_text(const Setting& s) {
  const std::string unit = s.note.empty() ? "" : fmt::format(" ({})", s.note);
  const char* kind = s.kind == Kind::integer ? "a whole number" : "a finite number";
  if (std::isinf(s.most))
    return fmt::format("{} {} {}{}", kind, s.least_included ? ">=" : ">", s.least, unit);
  return fmt::format("{} from {} to {}{}", kind, s.least, s.most, unit);
}

void check_value(const Setting& s, const std::string& value, std::string_view argument) {
  const auto refuse = [&](const std::string& allowed) {
    throw ValueError(fmt::format("{}: {} '{}' is not allowed; expected {}", argument, s.key, value, allowed));
  };
  switch (s.kind) {
    case Kind::choice:
      if (std::find(s.choices.begin(), s.choices.end(), value) == s.choices.end())
        refuse(fmt::format("one of {}{}", fmt::join(s.choices, ", "),
                           s.note.empty() ? "" : fmt::format(" ({})", s.note)));
      return;
    case Kind::boolean:
      // src/xbt/config.cpp, parse_bool.
      for (const char* word : {"yes", "on", "true", "1", "no", "off", "false", "0"})
        if (value == word) return;
      refuse("yes, on, true, 1, no, off, false or 0");
      return;
    case Kind::number: {
      const auto number = parse_double(value);
      if (!number || !std::isfinite(*number) || *number < s.least ||
          (!s.least_included && *number == s.least) || *number > s.most)
        refuse(range_text(s));
      return;
    }
    case Kind::integer: {
      const auto number = parse_long(value);
      if (!number || *number < s.least || *number > s.most) refuse(range_text(s));
      return;
    }
  }
}

// One "key:value" of a --cfg.
void check_one_setting(const std::string& setting, std::string_view argument) {
  const auto colon = setting.find(':');
  if (colon == std::string::npos)
    throw ValueError(fmt::format("{}: '{}' has no value; expected KEY:VALUE, e.g. --cfg=network/model:CM02",
                                 argument, setting));
  const std::string key = setting.substr(0, colon);
  const auto it =
      std::find_if(settings().begin(), settings().end(), [&](const Setting& s) { return s.key == key; });
  if (it == settings().end())
    throw ValueError(fmt::format("{}: '{}' is not a SimGrid setting spmdsim takes; it takes {}", argument,
                                 key, fmt::join(keys(), ", ")));
  check_value(*it, setting.substr(colon + 1), argument);
}

// A --cfg's text split as SimGrid splits it (src/xbt/config.cpp, set_parse): settings separated by spaces,
// tabs, newlines or commas.
std::vector<std::string> split_settings(std::string_view text) {
  std::vector<std::string> parts;
  constexpr std::string_view kSeparators = " \t\n,";
  while (!text.empty()) {
    const auto start = text.find_first_not_of(kSeparators);
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const auto end = text.find_first_of(kSeparators);
    parts.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
  }
  return parts;
}

void check_cfg(std::string_view text, std::string_view argument) {
  const auto parts = split_settings(text);
  if (parts.empty())
    throw ValueError(
        fmt::format("{}: no setting; expected KEY:VALUE, e.g. --cfg=network/model:CM02", argument));
  for (const auto& setting : parts) check_one_setting(setting, argument);
}

// The --log words, split on spaces as SimGrid does (src/xbt/log.cpp, xbt_log_control_set); SimGrid also
// takes quotes and backslashes, which no category, priority or appender needs: they are refused below.
std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  while (!text.empty()) {
    const auto start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const auto end = text.find(' ');
    words.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
  }
  return words;
}

constexpr std::string_view kLogForm =
    "expected CATEGORY.thres:PRIORITY, CATEGORY.app:APPENDER, CATEGORY.fmt:LAYOUT or CATEGORY.add:on|off "
    "(e.g. --log=spmdsim.thres:debug)";

bool is_identifier(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// A layout's % directives (src/xbt/xbt_log_layout_format.cpp): SimGrid aborts on any other at the first
// line it prints.
void check_layout(const std::string& layout, std::string_view argument) {
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (layout[i] != '%') continue;
    ++i;
    while (i < layout.size() && (layout[i] == '.' || std::isdigit(static_cast<unsigned char>(layout[i]))))
      ++i;
    if (i >= layout.size() || std::string_view("%necphtPaiFlLMdrm").find(layout[i]) == std::string_view::npos)
      throw ValueError(
          fmt::format("{}: layout '{}' has '%{}'; the directives are %c %p %h %t %a %i %F %l %L "
                      "%M %d %r %m %n %e %% (with an optional width or .precision)",
                      argument, layout, i < layout.size() ? std::string(1, layout[i]) : ""));
  }
}

void check_appender(const std::string& value, std::string_view argument) {
  if (value == "stderr" || value == "stdout") return;
  std::string path;
  if (value.starts_with("file:")) {
    path = value.substr(5);
  } else if (value.starts_with("rollfile:") || value.starts_with("splitfile:")) {
    const std::string rest = value.substr(value.find(':') + 1);
    const auto colon = rest.find(':');
    const std::string size = rest.substr(0, colon);
    if (colon == std::string::npos || size.empty() ||
        size.find_first_not_of("0123456789") != std::string::npos)
      throw ValueError(
          fmt::format("{}: appender '{}' needs a size in bytes and a file, e.g. rollfile:1000000:log.txt",
                      argument, value));
    path = rest.substr(colon + 1);
  } else {
    throw ValueError(
        fmt::format("{}: appender '{}' is not one of stderr, stdout, file:PATH, rollfile:SIZE:PATH, "
                    "splitfile:SIZE:PATH",
                    argument, value));
  }
  // SimGrid opens the file for writing and aborts when it cannot.
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path file(path);
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (path.empty() || fs::is_directory(file, error) || !fs::is_directory(folder, error) ||
      ::access(folder.c_str(), W_OK) != 0)
    throw ValueError(
        fmt::format("{}: SimGrid cannot write the log file '{}' (a file in a folder that exists "
                    "and can be written)",
                    argument, path));
}

// One word of a --log (src/xbt/log.cpp, _xbt_log_parse_setting): CATEGORY.OPTION:VALUE or =VALUE, OPTION a
// prefix of threshold, additivity, appender or fmt.
void check_log_word(const std::string& word, std::string_view argument) {
  const auto dot = word.find('.');
  const auto separator = word.find_first_of(":=");
  if (dot == std::string::npos || separator == std::string::npos || separator < dot ||
      word.find_first_of(":= ") < dot)
    throw ValueError(fmt::format("{}: '{}' is not a log setting; {}", argument, word, kLogForm));
  const std::string category = word.substr(0, dot);
  const std::string option = word.substr(dot + 1, separator - dot - 1);
  const std::string value = word.substr(separator + 1);
  if (!is_identifier(category))
    throw ValueError(
        fmt::format("{}: '{}' is not a log category (categories are identifiers such as spmdsim, "
                    "spmdsim_coll, xbt_cfg); {}",
                    argument, category, kLogForm));
  const auto is_prefix_of = [&](std::string_view full) { return full.starts_with(option); };
  if (is_prefix_of("threshold")) {
    std::string lower = value;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* priority : {"trace", "debug", "verbose", "info", "warning", "error", "critical"})
      if (lower == priority) return;
    throw ValueError(
        fmt::format("{}: priority '{}'; expected trace, debug, verbose, info, warning, error or critical",
                    argument, value));
  }
  if (is_prefix_of("additivity")) return;  // "on", "yes" or "1" turn it on, anything else off
  if (is_prefix_of("appender")) return check_appender(value, argument);
  if (is_prefix_of("fmt")) return check_layout(value, argument);
  throw ValueError(fmt::format("{}: '{}' is no setting of a log category; {}", argument, option, kLogForm));
}

void check_log(std::string_view text, std::string_view argument) {
  if (text == "no_loc") return;
  if (text.find_first_of("\"'\\") != std::string_view::npos)
    throw ValueError(fmt::format("{}: quotes and backslashes are not taken; {}", argument, kLogForm));
  const auto words = split_words(text);
  if (words.empty()) throw ValueError(fmt::format("{}: no setting; {}", argument, kLogForm));
  for (const auto& word : words) check_log_word(word, argument);
}

}  // namespace

void check_simgrid_argument(std::string_view argument) {
  if (argument.starts_with("--cfg=")) return check_cfg(argument.substr(6), argument);
  if (argument.starts_with("--log=")) return check_log(argument.substr(6), argument);
}

void check_simgrid_setting(std::string_view setting) {
  check_cfg(setting, fmt::format("setting '{}'", setting));
}

ActorContexts actor_contexts(const std::vector<std::string>& arguments) {
  ActorContexts contexts{.factory = "raw", .stack_bytes = 8192 * 1024, .guard_bytes = page_size()};
  for (const auto& argument : arguments) {
    if (!argument.starts_with("--cfg=")) continue;
    for (const auto& setting : split_settings(std::string_view(argument).substr(6))) {
      const auto colon = setting.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = setting.substr(0, colon);
      const std::string value = setting.substr(colon + 1);
      if (key == "contexts/factory") contexts.factory = value;
      if (key == "contexts/stack-size") contexts.stack_bytes = parse_long(value).value_or(8192) * 1024;
      if (key == "contexts/guard-size") contexts.guard_bytes = parse_long(value).value_or(1) * page_size();
    }
  }
  return contexts;
}

}  // namespace spmdsim
