// spmdsim: the command line. Each command (commands/<name>/) parses its own options; mistakes exit with
// status 2 and a message that says what was wrong and what is allowed.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options/errors.hpp>

#include "commands/calibrate/run.hpp"
#include "commands/collectives/run.hpp"
#include "commands/demo/run.hpp"
#include "commands/kernels/run.hpp"
#include "commands/memory/run.hpp"
#include "commands/merge/run.hpp"
#include "commands/presets/run.hpp"
#include "commands/train/run.hpp"
#include "commands/validate/run.hpp"
#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"

namespace {

namespace cli = spmdsim::cli;

// A command: its name, what `spmdsim --help` says of it, and its entry point.
struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::string& program, const std::vector<std::string>& args);
};

// The commands, one line each, in the order the usage lists them.
constexpr Command kCommands[] = {
    {"demo",
     "the pmap tutorials' examples on simulated devices, ending with a summary of time and memory per device",
     &cli::demo::run},
    {"collectives",
     "an nccl-tests-style sweep: time, algbw and busbw of each collective and algorithm over message "
     "sizes and device counts",
     &cli::collectives::run},
    {"presets", "the devices, links, nodes and TPU slices spmdsim knows, with every figure and its source",
     &cli::presets::run},
    {"calibrate",
     "the node presets' simulated all-reduce busbw against published nccl-tests figures; --write-docs "
     "regenerates docs/calibration.md",
     &cli::calibrate::run},
    {"kernels",
     "the device presets' kernel classes against published measurements: GEMM throughput by shape and "
     "dtype (fit and held-out points), streaming kernels' memory bandwidth by size",
     &cli::kernels::run},
    {"train",
     "strong and weak scaling of data-parallel training of the MLP or a transformer over device counts: "
     "throughput, step-time breakdown, scaling efficiency, peak memory",
     &cli::train::run},
    {"validate",
     "published data-parallel training runs' step times against spmdsim's, each run as its `spmdsim train` "
     "command: the error of each and how many are within 15%",
     &cli::validate::run},
    {"memory",
     "device memory of one training step per model and strategy, by tag, against the ZeRO paper and the "
     "capacity; --fit finds the largest batch or number of layers that fits",
     &cli::memory::run},
    {"merge",
     "joins the CSV or JSON files of a sweep's shards (collectives, train or memory with --shard K/N, e.g. "
     "the "
     "tasks of a Slurm job array) into what the unsharded run writes",
     &cli::merge::run},
};

// `text` in lines of at most `width` characters, the second and later ones indented by `indent` spaces.
std::string wrapped(std::string_view text, std::size_t width, std::size_t indent) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const auto word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    start = end + 1;
  }
  return out + line;
}

void print_usage(std::ostream& out) {
  constexpr std::size_t kNameWidth = 11;
  out << "usage: spmdsim <command> [options]\n\ncommands:\n";
  for (const auto& command : kCommands)
    out << fmt::format("  {:<{}}  {}\n", command.name, kNameWidth,
                       wrapped(command.summary, 90, kNameWidth + 4));
  out << "\n`spmdsim <command> --help` lists a command's options; SimGrid's own --cfg=... and --log=... are\n"
         "accepted by every command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    for (const auto& c : kCommands)
      if (c.name == command) return c.run(argv[0], rest);
    std::vector<std::string_view> names;
    for (const auto& c : kCommands) names.push_back(c.name);
    std::cerr << fmt::format("spmdsim: unknown command '{}'; valid commands: {}\n", command,
                             fmt::join(names, ", "));
    return 2;
  } catch (const spmdsim::cli::UsageError& e) {
    std::cerr << "spmdsim " << command << ": " << e.what() << "\n(see spmdsim " << command << " --help)\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "spmdsim " << command << ": " << e.what() << "\n(see spmdsim " << command << " --help)\n";
    return 2;
  } catch (const spmdsim::Error& e) {
    std::cerr << "spmdsim " << command << ": " << e.python_type() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "spmdsim " << command << ": " << e.what() << "\n";
    return 1;
  }
}
