// The files a command writes (--csv, --json, --trace, --write-docs, --plot's PREFIX.png and PREFIX.svg),
// written so that no run destroys what a path names or leaves half a file behind:
// - a regular file (or a new one) is written into a temporary file beside it and renamed over it;
// - a symlink is followed: its target is written that way, the link stays a link;
// - an existing device or FIFO (/dev/null, a pipe) is written through, never replaced; /dev/stdout and the
//   process's other descriptors are written on the descriptor, after what the command printed;
// - a directory is refused.
// OutputFiles checks every path of a run before the run's work starts and renames the files into place only
// when the run commits them, so that a run failing half-way leaves none of its files; a SIGINT, SIGTERM or
// SIGHUP that ends the process first removes the temporary files too.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli {

// Writes `path` in place, without a temporary file: for a path OutputFiles::staged gave (which the run
// removes on failure). Throws std::runtime_error "cannot write 'PATH': <reason>".
void write_file_through(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// An output of a command: the option that names it and its path (empty: not asked for).
struct OutputPath {
  std::string_view option;
  std::string path;
};

class OutputFiles {
 public:
  // Checks each path given (and PREFIX.png, PREFIX.svg for a non-empty `plot_prefix`): its folder exists
  // and can be written, it is no directory, and no two name the same file. Throws UsageError naming the
  // option and the path otherwise.
  explicit OutputFiles(const std::vector<OutputPath>& files, const std::string& plot_prefix = {});
  // Removes every temporary file of a run that did not commit.
  ~OutputFiles();
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Writes one of the checked paths' content, renamed into place by commit() (a device or FIFO: now).
  void write(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

  // Where another writer (a child process) writes one of the checked paths with write_file_through: a
  // temporary file that commit() renames into place (or copies through to a device or FIFO).
  std::filesystem::path staged(const std::filesystem::path& path);

  // The prefix the plot script writes its PREFIX.png and PREFIX.svg to until commit() renames them.
  std::filesystem::path staged_plot_prefix();

  // Renames every staged file into place. Throws std::runtime_error naming the path on failure.
  void commit();

 private:
  struct Target;
  Target& target_of(const std::filesystem::path& path);
  std::filesystem::path temporary_for(const Target& target);

  std::vector<Target> targets_;
  std::string plot_prefix_;
  std::filesystem::path staged_plot_prefix_;
  std::vector<std::filesystem::path> scratch_;  // removed in any case: the plot script's own temporaries
};

}  // namespace spmdsim::cli
