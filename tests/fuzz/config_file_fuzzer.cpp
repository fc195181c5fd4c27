// libFuzzer target: the INI reader of `--config FILE` (experiments/common/config_file.hpp) on any file, with
// options of each kind a command has (text, whole number, real number, switch). A file it refuses must give
// a UsageError or one of Boost.Program_options' errors (the messages main prints); anything else that
// escapes, or a sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "common/config_file.hpp"
#include "memory_file.hpp"

namespace po = boost::program_options;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spmdsim::fuzz::MemoryFile file(data, size);
  std::string text;
  int count = 0;
  double real = 0;
  bool flag = false;
  po::options_description options("fuzzed command options");
  options.add_options()("help,h", "help")("maxbytes,e", po::value(&text)->default_value("8G"), "text")(
      "steps", po::value(&count)->default_value(1), "whole number")(
      "bucket-mb", po::value(&real), "real number")("check", po::bool_switch(&flag), "switch");
  spmdsim::cli::add_config_option(options);
  try {
    const spmdsim::cli::OptionValues values(std::vector<std::string>{"--config", file.path()}, options);
    values.attributed({"maxbytes"}, [] {});
  } catch (const spmdsim::cli::UsageError&) {
  } catch (const po::error&) {
  }
  return 0;
}
