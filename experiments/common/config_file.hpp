// A subcommand's options from its command line and, with --config FILE, from an INI file of the same options
// (Boost.Program_options' config file: `key = value` lines with the options' long names, `#` comments). The
// command line wins where both give an option. Every subcommand can read its options this way.
#pragma once

#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "common/command_line.hpp"

namespace spmdsim::cli {

// Adds --config FILE to a subcommand's options.
void add_config_option(boost::program_options::options_description& options);

class OptionValues {
 public:
  // Refuses a word of `args` that is no option or its value ("unexpected argument 'extra'"). Stores `args`,
  // then (unless --help is among them) what the --config file gives and `args` does not, then notifies the
  // options' bound variables. Throws UsageError naming the file for a file that cannot be read, a line that
  // is no `key = value`, a key `options` does not have (listing those it has), a value its option refuses or
  // a key given twice; Boost's errors on `args` become UsageErrors with Boost's message.
  OptionValues(const std::vector<std::string>& args,
               const boost::program_options::options_description& options);

  const boost::program_options::variables_map& map() const { return values_; }

  // Runs `read`, which reads the options `keys`. A UsageError it throws gains the file's name and those of
  // `keys` whose values came from the file: "sweep.ini, key maxbytes: bad size '1X' for --maxbytes: ...".
  template <class Read>
  auto attributed(std::initializer_list<std::string_view> keys, Read&& read) const {
    try {
      return read();
    } catch (const UsageError& error) {
      throw attributed_error(keys, error);
    }
  }

 private:
  UsageError attributed_error(std::initializer_list<std::string_view> keys, const UsageError& error) const;

  boost::program_options::variables_map values_;
  std::string file_;
  std::set<std::string, std::less<>> from_file_;
};

}  // namespace spmdsim::cli
