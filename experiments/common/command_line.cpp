#include "common/command_line.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/simgrid_arguments.hpp"

namespace spmdsim::cli {

SplitArguments split_simgrid_arguments(const std::string& program, const std::vector<std::string>& args) {
  SplitArguments split;
  split.simgrid.push_back(program);
  for (const auto& arg : args) {
    if (arg.starts_with("--cfg=") || arg.starts_with("--log=")) {
      try {
        check_simgrid_argument(arg);
      } catch (const ValueError& e) {
        throw UsageError(e.what());
      }
      split.simgrid.push_back(arg);
    } else
      split.ours.push_back(arg);
  }
  return split;
}

std::vector<std::string> cfg_settings(const std::vector<std::string>& simgrid_args) {
  std::vector<std::string> settings;
  for (const auto& arg : simgrid_args)
    if (arg.starts_with("--cfg=")) settings.push_back(arg.substr(6));
  return settings;
}

std::vector<std::string> settings_not_overridden(const std::vector<std::string>& settings,
                                                 const std::vector<std::string>& simgrid_args) {
  const auto key = [](std::string_view setting) { return setting.substr(0, setting.find(':')); };
  const auto given = cfg_settings(simgrid_args);
  std::vector<std::string> kept;
  for (const auto& s : settings)
    if (std::none_of(given.begin(), given.end(), [&](const std::string& g) { return key(g) == key(s); }))
      kept.push_back(s);
  return kept;
}

bool parse_on_off(const std::string& text, std::string_view option) {
  if (text != "on" && text != "off")
    throw UsageError(fmt::format("unknown {} '{}'; valid: on, off", option, text));
  return text == "on";
}

std::int64_t parse_count(const std::string& text, std::string_view option, std::int64_t least,
                         std::int64_t most) {
  const auto digits = text.find_first_not_of('0');
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      (digits != std::string::npos && text.size() - digits > 18) || std::stoll(text) < least ||
      std::stoll(text) > most)
    throw UsageError(
        fmt::format("{} must be a whole number from {} to {} (got '{}')", option, least, most, text));
  return std::stoll(text);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

Argv::Argv(std::vector<std::string>& args) : argc_(static_cast<int>(args.size())) {
  for (auto& a : args) pointers_.push_back(a.data());
  pointers_.push_back(nullptr);
}

}  // namespace spmdsim::cli
