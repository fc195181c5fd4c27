#include "common/config_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options/errors.hpp>
#include <boost/program_options/parsers.hpp>

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kConfigOption = "config";

// The keys a config file may have: every long option but --config and --help.
std::vector<std::string> file_keys(const po::options_description& options) {
  std::vector<std::string> keys;
  for (const auto& option : options.options())
    if (option->long_name() != kConfigOption && option->long_name() != "help")
      keys.push_back(option->long_name());
  return keys;
}

// Boost.Program_options (1.74) fills a message's %value%-like tokens by replacing until none is left, so a
// value holding its own token ("steps = %value%") would never end. Such a value is quoted with '?' for '%'.
struct SubstitutionsOf : po::error_with_option_name {
  static constexpr auto member = &SubstitutionsOf::m_substitutions;
};

std::string message_of(po::error& error) {
  if (auto* named = dynamic_cast<po::error_with_option_name*>(&error)) {
    for (auto [name, value] : named->*SubstitutionsOf::member)
      if (value.find('%' + name + '%') != std::string::npos) {
        std::replace(value.begin(), value.end(), '%', '?');
        named->set_substitute(name, value);
      }
  }
  return error.what();
}

}  // namespace

void add_config_option(po::options_description& options) {
  options.add_options()(
      kConfigOption, po::value<std::string>(),
      "also read options from this INI file, one `key = value` a line with the options' long "
      "names (maxbytes = 64M); options on the command line win");
}

OptionValues::OptionValues(const std::vector<std::string>& args, const po::options_description& options) try {
  const auto command_line = po::command_line_parser(args).options(options).run();
  // Boost keeps a word that belongs to no option aside and store() drops it: a typo would go unnoticed.
  for (const auto& option : command_line.options)
    if (option.string_key.empty())
      throw UsageError(fmt::format("unexpected argument '{}': every option has a name (--name value)",
                                   option.original_tokens.empty() ? "" : option.original_tokens.front()));
  po::store(command_line, values_);
  if (values_.count(kConfigOption) && !values_.count("help")) {
    file_ = values_[kConfigOption].as<std::string>();
    std::ifstream in(file_);
    if (!in || std::filesystem::is_directory(file_))
      throw UsageError(
          fmt::format("--config: cannot read '{}' ({})", file_, in ? "a directory" : std::strerror(errno)));
    const auto keys = file_keys(options);
    try {
      const auto parsed = po::parse_config_file(in, options, true);
      std::set<std::string, std::less<>> given;
      for (const auto& option : command_line.options) given.insert(option.string_key);
      for (const auto& option : parsed.options) {
        if (std::find(keys.begin(), keys.end(), option.string_key) == keys.end())
          throw UsageError(fmt::format("{}: unknown key '{}'; valid: {}", file_, option.string_key,
                                       fmt::join(keys, ", ")));
        if (!given.contains(option.string_key)) from_file_.insert(option.string_key);
      }
      po::store(parsed, values_);
    } catch (po::error& error) {
      throw UsageError(fmt::format("{}: {}", file_, message_of(error)));
    }
  }
  po::notify(values_);
} catch (po::error& error) {
  throw UsageError(message_of(error));
}

UsageError OptionValues::attributed_error(std::initializer_list<std::string_view> keys,
                                          const UsageError& error) const {
  std::vector<std::string_view> in_file;
  for (auto key : keys)
    if (from_file_.contains(key)) in_file.push_back(key);
  if (in_file.empty()) return error;
  return UsageError(fmt::format("{}, {} {}: {}", file_, in_file.size() == 1 ? "key" : "keys",
                                fmt::join(in_file, ", "), error.what()));
}

}  // namespace spmdsim::cli
