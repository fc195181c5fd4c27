#include "common/output_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {
namespace {

namespace fs = std::filesystem;

// The temporary files of the process that a run has not put in place, removed when a signal (SIGINT,
// SIGTERM, SIGHUP) or exit() ends the process before the run does: a fixed table, which a signal handler can
// read without allocating or locking.
class PendingFiles;
PendingFiles& pending();

class PendingFiles {
 public:
  ~PendingFiles() { remove_all(); }  // exit(), from a handler of SimGrid's say

  // Registers `path` once.
  void add(const fs::path& path) {
    install_handlers();
    const auto& text = path.native();
    if (text.size() >= kPathSize) return;
    for (std::size_t i = 0; i < kSlots; ++i)
      if (used_[i].load() && text == paths_[i].data()) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
      if (used_[i].load()) continue;
      text.copy(paths_[i].data(), text.size());
      paths_[i][text.size()] = '\0';
      used_[i].store(true);
      return;
    }
  }

  void forget(const fs::path& path) {
    for (std::size_t i = 0; i < kSlots; ++i)
      if (used_[i].load() && path.native() == paths_[i].data()) used_[i].store(false);
  }

  void remove_all() {
    for (std::size_t i = 0; i < kSlots; ++i)
      if (used_[i].load()) ::unlink(paths_[i].data());
  }

 private:
  static constexpr std::size_t kSlots = 32, kPathSize = 4096;

  static void on_signal(int signal) {
    pending().remove_all();
    ::raise(signal);  // SA_RESETHAND: the default action now ends the process
  }

  // Once, for the signals whose default action ends the process and that nobody else handles.
  static void install_handlers() {
    static const bool installed = [] {
      for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (::sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = &PendingFiles::on_signal;
        action.sa_flags = SA_RESETHAND;
        ::sigemptyset(&action.sa_mask);
        ::sigaction(signal, &action, nullptr);
      }
      return true;
    }();
    (void)installed;
  }

  std::array<std::array<char, kPathSize>, kSlots> paths_{};
  std::array<std::atomic<bool>, kSlots> used_{};
};

PendingFiles& pending() {
  static PendingFiles files;
  return files;
}

std::runtime_error write_error(const fs::path& path, std::string_view reason) {
  return std::runtime_error(fmt::format("cannot write '{}': {}", path.string(), reason));
}

// /dev/stdout, /dev/fd/N and /proc/self/fd/N name an open file of the process, not a path: their link's text
// ("pipe:[123]", or the file a shell redirected to) is no file to replace.
bool names_an_open_file(const fs::path& link) {
  return link.string().starts_with("/proc/") || link.string().starts_with("/dev/fd/");
}

// What `path` names once its symlinks are followed (a link to a link too; a dangling one to the file it
// would create), or the link in the way that names an open file of the process (/dev/stdout).
fs::path resolved(const fs::path& path) {
  fs::path file = path;
  std::error_code error;
  for (int hops = 0; hops < 40 && fs::is_symlink(file, error); ++hops) {
    const auto link = fs::read_symlink(file, error);
    if (error) break;
    const auto next = link.is_absolute() ? link : file.parent_path() / link;
    if (names_an_open_file(file) || names_an_open_file(next)) return file;
    file = next;
  }
  return file;
}

fs::path folder_of(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

// An existing device or FIFO, or an open file of the process (/dev/stdout): written through, never replaced.
bool written_through(const fs::path& file) {
  std::error_code error;
  const auto status = fs::status(file, error);
  return fs::exists(status) && !fs::is_directory(status) &&
         (!fs::is_regular_file(status) || fs::is_symlink(file, error));
}

// Writes `text` whole to `fd`; errors name `shown`.
void write_all(int fd, const std::string& text, const fs::path& shown) {
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw write_error(shown, std::strerror(n < 0 ? errno : ENOSPC));
    done += static_cast<std::size_t>(n);
  }
}

// Opens `file` with `flags` (and `mode` for a file it replaces) and writes `text` whole; errors name `shown`.
void write_text(const fs::path& file, int flags, mode_t mode, const std::string& text,
                const fs::path& shown) {
  const int fd = ::open(file.c_str(), flags | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) throw write_error(shown, std::strerror(errno));
  if (mode != 0) ::fchmod(fd, mode);
  try {
    write_all(fd, text, shown);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw write_error(shown, std::strerror(errno));
}

// The descriptor /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names; -1 for any other path.
int descriptor_named(const fs::path& file) {
  const auto text = file.string();
  if (text == "/dev/stdout") return STDOUT_FILENO;
  if (text == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view folder : {"/dev/fd/", "/proc/self/fd/"}) {
    const auto number = std::string_view(text).substr(std::min(folder.size(), text.size()));
    if (text.starts_with(folder) && !number.empty() && number.size() < 6 &&
        number.find_first_not_of("0123456789") == std::string_view::npos)
      return std::stoi(std::string(number));
  }
  return -1;
}

// Writes through. One of the process's own descriptors is written as it is (a reopened /dev/stdout would
// have an offset of its own and overwrite, or be overwritten by, what the command prints), after what the
// command printed so far.
void write_through(const fs::path& file, const std::string& text, const fs::path& shown) {
  const int fd = descriptor_named(file);
  if (fd < 0) {
    write_text(file, 0, 0, text, shown);
    return;
  }
  std::cout.flush();
  std::cerr.flush();
  write_all(fd, text, shown);
}

std::string content_of(const std::function<void(std::ostream&)>& write) {
  std::ostringstream text;
  write(text);
  return std::move(text).str();
}

// The permissions a replaced regular file had (0: a new file, made with 0666 less the umask).
mode_t mode_of(const fs::path& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0;
}

// A new, empty file beside `file`, named after it: FILE.<pid>.partial (FILE.<pid>-<n>.partial if taken),
// pending before it exists, so that a signal removes it from the moment it appears.
fs::path create_temporary(const fs::path& file, const fs::path& shown) {
  for (int n = 0;; ++n) {
    auto temporary = file;
    temporary +=
        n == 0 ? fmt::format(".{}.partial", ::getpid()) : fmt::format(".{}-{}.partial", ::getpid(), n);
    pending().add(temporary);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temporary;
    }
    const int reason = errno;
    pending().forget(temporary);
    if (reason != EEXIST || n > 100) throw write_error(shown, std::strerror(reason));
  }
}

// `temporary`, written whole, renamed over `file`; removed on failure.
void replace_with(const fs::path& file, const fs::path& temporary, const fs::path& shown) {
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    const int reason = errno;
    ::unlink(temporary.c_str());
    throw write_error(shown, std::strerror(reason));
  }
}

}  // namespace

void write_file_through(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  write_text(path, O_CREAT | O_TRUNC, 0, content_of(write), path);
}

struct OutputFiles::Target {
  std::string option;
  fs::path path;  // as given
  fs::path file;  // the symlinks followed
  bool through = false;
  fs::path temporary;  // staged, renamed (or copied through) by commit()
};

OutputFiles::OutputFiles(const std::vector<OutputPath>& files, const std::string& plot_prefix)
    : plot_prefix_(plot_prefix) {
  std::vector<OutputPath> all;
  for (const auto& f : files)
    if (!f.path.empty()) all.push_back(f);
  if (!plot_prefix.empty())
    for (const char* extension : {".png", ".svg"}) all.push_back({"--plot", plot_prefix + extension});
  for (const auto& [option, path] : all) {
    Target target{.option = std::string(option), .path = path, .file = resolved(path)};
    std::error_code error;
    const auto status = fs::status(target.file, error);
    if (error && error != std::errc::no_such_file_or_directory)
      throw UsageError(fmt::format("{} '{}': {}", option, path, error.message()));
    if (fs::is_directory(status)) throw UsageError(fmt::format("{} '{}' is a directory", option, path));
    target.through = written_through(target.file);
    const auto folder = folder_of(target.file);
    if (target.through) {
      if (::access(target.file.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("{} '{}': {}", option, path, std::strerror(errno)));
    } else if (!fs::is_directory(folder)) {
      throw UsageError(fmt::format("{} '{}': no folder '{}'", option, path, folder.string()));
    } else if (::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw UsageError(fmt::format("{} '{}': cannot write in '{}': {}", option, path, folder.string(),
                                   std::strerror(errno)));
    }
    const auto same = fs::weakly_canonical(fs::absolute(target.file), error);
    for (const auto& other : targets_)
      if (fs::weakly_canonical(fs::absolute(other.file), error) == same)
        throw UsageError(
            other.option == option
                ? fmt::format("{} '{}' and '{}' name the same file", option, other.path.string(), path)
                : fmt::format("{} '{}' and {} '{}' name the same file", other.option, other.path.string(),
                              option, path));
    targets_.push_back(std::move(target));
  }
}

OutputFiles::~OutputFiles() {
  for (const auto& target : targets_)
    if (!target.temporary.empty()) {
      ::unlink(target.temporary.c_str());
      pending().forget(target.temporary);
    }
  for (const auto& path : scratch_) {
    ::unlink(path.c_str());
    pending().forget(path);
  }
}

OutputFiles::Target& OutputFiles::target_of(const fs::path& path) {
  for (auto& target : targets_)
    if (target.path == path) return target;
  throw std::logic_error(fmt::format("'{}' is not among the command's checked outputs", path.string()));
}

fs::path OutputFiles::temporary_for(const Target& target) {
  if (!target.temporary.empty()) return target.temporary;
  // What goes through to a device or FIFO waits in the temporary directory: nothing is made beside /dev/null.
  const auto beside = target.through
                          ? fs::temp_directory_path() / ("spmdsim-" + target.file.filename().string())
                          : target.file;
  return create_temporary(beside, target.path);
}

void OutputFiles::write(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  auto& target = target_of(path);
  const auto text = content_of(write);
  if (target.through) {
    write_through(target.file, text, target.path);
    return;
  }
  target.temporary = temporary_for(target);
  write_text(target.temporary, O_TRUNC, mode_of(target.file), text, target.path);
}

fs::path OutputFiles::staged(const fs::path& path) {
  auto& target = target_of(path);
  target.temporary = temporary_for(target);
  return target.temporary;
}

fs::path OutputFiles::staged_plot_prefix() {
  if (!staged_plot_prefix_.empty()) return staged_plot_prefix_;
  // A reserved name in PREFIX's folder; the script writes <it>.png and <it>.svg (through <it>.png.partial
  // and <it>.svg.partial), and plotting its data file <it>.plot-data.json.
  const auto reserved = create_temporary(plot_prefix_, plot_prefix_);
  scratch_.push_back(reserved);
  staged_plot_prefix_ = reserved;
  for (const char* extension : {".png", ".svg"}) {
    auto& target = target_of(plot_prefix_ + extension);
    target.temporary = reserved.string() + extension;
    pending().add(target.temporary);
    scratch_.push_back(target.temporary.string() + ".partial");
  }
  scratch_.push_back(reserved.string() + ".plot-data.json");
  for (const auto& path : scratch_) pending().add(path);
  return staged_plot_prefix_;
}

void OutputFiles::commit() {
  // What goes through to a device or FIFO first: that can fail (/dev/full), and then no file is in place yet.
  for (auto& target : targets_) {
    if (target.temporary.empty() || !target.through) continue;
    const auto temporary = std::exchange(target.temporary, {});
    std::ifstream in(temporary, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    ::unlink(temporary.c_str());
    pending().forget(temporary);
    write_through(target.file, text.str(), target.path);
  }
  for (auto& target : targets_) {
    if (target.temporary.empty()) continue;
    const auto temporary = std::exchange(target.temporary, {});
    pending().forget(temporary);
    replace_with(target.file, temporary, target.path);
  }
}

}  // namespace spmdsim::cli
