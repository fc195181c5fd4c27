// spmdsim: the command line. Each subcommand parses its own options; mistakes exit with status 2 and a
// message that says what was wrong and what is allowed.
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>

#include "calibration_command.hpp"
#include "collectives_sweep.hpp"
#include "command_line.hpp"
#include "demo.hpp"
#include "memory_command.hpp"
#include "presets_command.hpp"
#include "spmdsim/errors.hpp"
#include "train_command.hpp"

namespace {

constexpr const char* kUsage =
    "usage: spmdsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  demo    the pmap tutorials' examples on simulated devices, with the timing and memory report\n"
    "  collectives  an nccl-tests-style sweep: time, algbw and busbw of each collective and algorithm over\n"
    "                message sizes and device counts\n"
    "  presets  the devices, links, nodes and TPU slices spmdsim knows, with every figure and its source\n"
    "  calibrate  the node presets' simulated all-reduce busbw against published nccl-tests figures;\n"
    "             --write-docs regenerates docs/calibration.md\n"
    "  train   strong and weak scaling of data-parallel training of the MLP or a transformer over device\n"
    "          counts: throughput, step-time breakdown, scaling efficiency, peak memory\n"
    "  memory  device memory of one training step per model and strategy, by tag, against the ZeRO paper\n"
    "          and the capacity; --fit finds the largest batch or number of layers that fits\n"
    "\n"
    "`spmdsim <command> --help` lists a command's options; SimGrid's own --cfg=... and --log=... are\n"
    "accepted by every command.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (command == "demo") return spmdsim::cli::run_demo(argv[0], rest);
    if (command == "collectives") return spmdsim::cli::run_collectives_sweep(argv[0], rest);
    if (command == "presets") return spmdsim::cli::run_presets(argv[0], rest);
    if (command == "calibrate") return spmdsim::cli::run_calibrate(argv[0], rest);
    if (command == "train") return spmdsim::cli::run_train(argv[0], rest);
    if (command == "memory") return spmdsim::cli::run_memory(argv[0], rest);
    std::cerr << "spmdsim: unknown command '" << command
              << "'; valid commands: demo, collectives, presets, calibrate, train, memory\n";
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
