#include "common/plotting.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "common/output_files.hpp"

extern char** environ;

namespace spmdsim::cli {
namespace {

// Runs a program to the end; its exit status, or nullopt when it could not be started.
std::optional<int> run_program(const std::vector<std::string>& argv, bool quiet) {
  std::vector<std::string> args = argv;
  Argv c_argv(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0].c_str(), &actions, nullptr, c_argv.argv(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The script installed beside the program's share directory, else in the source tree.
std::filesystem::path find_script(std::string_view script) {
  std::error_code error;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = program.parent_path().parent_path() / "share" / "spmdsim" / script;
    if (std::filesystem::exists(installed)) return installed;
  }
  const auto source = std::filesystem::path(SPMDSIM_EXPERIMENTS_DIR) / script;
  if (std::filesystem::exists(source)) return source;
  throw std::runtime_error(
      fmt::format("--plot: cannot find {} (looked in {})", script, source.parent_path().string()));
}

void run_script(const std::string& python, std::string_view script, const std::filesystem::path& json,
                const std::string& prefix) {
  const auto path = find_script(script).string();
  const auto status = run_program({python, path, json.string(), prefix}, false);
  if (status != 0)
    throw std::runtime_error(
        fmt::format("--plot: {} {} failed ({})", python, path,
                    status ? fmt::format("exit status {}", *status) : "could not start"));
}

}  // namespace

// Debian's python3-matplotlib installs for /usr/bin/python3, which a python3 earlier on PATH (a pyenv or venv
// one) may not see: hence the last candidate.
std::string find_plotting_python() {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("SPMDSIM_PYTHON"); chosen != nullptr && *chosen != '\0')
    candidates.push_back(chosen);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  std::vector<std::string> tried;
  for (const auto& python : candidates) {
    const auto status = run_program({python, "-c", "import matplotlib"}, true);
    if (status == 0) return python;
    tried.push_back(fmt::format("{}: {}", python, status ? "no matplotlib" : "not found"));
  }
  throw std::runtime_error(fmt::format(
      "--plot needs python3 with matplotlib ({}); install it (Debian: apt-get install python3-matplotlib; "
      "pip: pip install matplotlib) or set SPMDSIM_PYTHON to a python3 that has it",
      fmt::join(tried, "; ")));
}

void write_plots(const std::string& python, std::string_view script, OutputFiles& outputs,
                 const std::function<void(std::ostream&)>& write_json) {
  const auto prefix = outputs.staged_plot_prefix();
  const std::filesystem::path data = prefix.string() + ".plot-data.json";
  write_file_through(data, write_json);
  run_script(python, script, data, prefix.string());
  std::filesystem::remove(data);
}

}  // namespace spmdsim::cli
