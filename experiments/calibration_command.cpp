#include "calibration_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "calibration.hpp"
#include "command_line.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;
using topologies::NodePreset;

struct CalibrateOptions {
  std::vector<const NodePreset*> presets;
  std::string docs_path;  // empty: do not write
};

std::vector<std::string_view> calibrated_names() {
  std::vector<std::string_view> names;
  for (const auto& p : topologies::node_presets())
    if (p.calibration) names.push_back(p.name);
  return names;
}

std::optional<CalibrateOptions> parse(const std::vector<std::string>& args) {
  CalibrateOptions options;
  std::string presets;
  po::options_description described("spmdsim calibrate options");
  described.add_options()("help,h", "show this help")(
      "presets", po::value(&presets),
      fmt::format("node presets to calibrate, comma-separated (default: all with a target: {})",
                  fmt::join(calibrated_names(), ", "))
          .c_str())(
      "write-docs", po::value(&options.docs_path)->implicit_value(SPMDSIM_DOCS_DIR "/calibration.md"),
      "also write the comparison as markdown to this file (default: the source tree's docs/calibration.md)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout
        << "usage: spmdsim calibrate [options] [--cfg=simgrid/setting:value ...]\n\n"
        << "Simulates each node preset's all-reduce at the sizes of its published nccl-tests figure and\n"
        << "prints simulated vs published busbw, the error, and the model correction that would remove it.\n"
        << "A --cfg given here overrides the preset's network settings.\n\n"
        << described << "\n";
    return std::nullopt;
  }
  po::notify(vm);
  const auto valid = calibrated_names();
  std::vector<std::string> names;
  std::istringstream list(presets);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) names.push_back(item);
  if (vm.count("presets") && names.empty()) throw UsageError("--presets names no preset");
  if (names.empty()) names.assign(valid.begin(), valid.end());
  for (const auto& name : names) {
    if (std::find(valid.begin(), valid.end(), name) == valid.end())
      throw UsageError(
          fmt::format("unknown node preset '{}' in --presets; valid: {}", name, fmt::join(valid, ", ")));
    const auto* preset = &topologies::node_preset(name);
    if (std::find(options.presets.begin(), options.presets.end(), preset) == options.presets.end())
      options.presets.push_back(preset);
  }
  return options;
}

// SimGrid keeps one engine per process, so each simulation runs in a child process of its own: it writes one
// line per point ("<bytes> <time> <busbw>") or "error <message>" to a pipe and exits.
std::vector<CalibrationPoint> simulate_in_child(const NodePreset& preset, double link_scale,
                                                const std::vector<std::string>& simgrid_args) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("calibrate: cannot create a pipe");
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("calibrate: cannot fork");
  if (pid == 0) {
    close(fds[0]);
    std::string message;
    int status = 0;
    try {
      for (const auto& p : simulate_calibration(preset, link_scale, simgrid_args))
        message += fmt::format("{:.17g} {:.17g} {:.17g}\n", p.bytes, p.time, p.busbw);
    } catch (const std::exception& e) {
      message = fmt::format("error {}\n", e.what());
      status = 1;
    }
    for (std::size_t done = 0; done < message.size();) {
      const auto n = write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    std::fflush(nullptr);
    _exit(status);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    const auto n = read(fds[0], buffer, sizeof buffer);
    if (n > 0)
      text.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (text.starts_with("error "))
    throw std::runtime_error(fmt::format("calibrating {}: {}", preset.name, text.substr(6, text.size() - 7)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(
        fmt::format("calibrating {}: the simulation process failed (status {})", preset.name, status));
  std::vector<CalibrationPoint> points;
  std::istringstream in(text);
  for (CalibrationPoint p; in >> p.bytes >> p.time >> p.busbw;) points.push_back(p);
  if (points.size() != preset.calibration->sizes.size())
    throw std::runtime_error(fmt::format("calibrating {}: expected {} results, got {}", preset.name,
                                         preset.calibration->sizes.size(), points.size()));
  return points;
}

}  // namespace

int run_calibrate(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  const std::vector<std::string> simgrid_args(split.simgrid.begin() + 1, split.simgrid.end());
  std::vector<CalibrationResult> results;
  for (const auto* preset : parsed->presets) {
    auto points = simulate_in_child(*preset, 1.0, simgrid_args);
    auto doubled = simulate_in_child(*preset, 2.0, simgrid_args);
    results.push_back(make_result(*preset, calibration_settings(*preset, simgrid_args), std::move(points),
                                  std::move(doubled)));
  }
  write_calibration_table(std::cout, results);
  if (!parsed->docs_path.empty()) {
    write_file_atomically(parsed->docs_path,
                          [&](std::ostream& out) { write_calibration_markdown(out, results); });
    std::cout << fmt::format("\n# wrote {}\n", parsed->docs_path);
  }
  return 0;
}

}  // namespace spmdsim::cli
