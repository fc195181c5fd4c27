#include "common/output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {
namespace {

namespace fs = std::filesystem;

std::runtime_error write_error(const fs::path& path, std::string_view reason) {
  return std::runtime_error(fmt::format("cannot write '{}': {}", path.string(), reason));
}

// What `path` names once its symlinks are followed (a link to a link too; a dangling one to the file it
// would create).
fs::path resolved(const fs::path& path) {
  fs::path file = path;
  std::error_code error;
  for (int hops = 0; hops < 40 && fs::is_symlink(file, error); ++hops) {
    const auto link = fs::read_symlink(file, error);
    if (error) break;
    file = link.is_absolute() ? link : file.parent_path() / link;
  }
  return file;
}

fs::path folder_of(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

// An existing device or FIFO: written through, never replaced.
bool written_through(const fs::path& file) {
  std::error_code error;
  const auto status = fs::status(file, error);
  return fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
}

// Opens `file` with `flags` and writes `text` whole; errors name `shown`.
void write_text(const fs::path& file, int flags, mode_t mode, const std::string& text,
                const fs::path& shown) {
  const int fd = ::open(file.c_str(), flags | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) throw write_error(shown, std::strerror(errno));
  if (mode != 0) ::fchmod(fd, mode);
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int reason = n < 0 ? errno : ENOSPC;
      ::close(fd);
      throw write_error(shown, std::strerror(reason));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw write_error(shown, std::strerror(errno));
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

// A new, empty file beside `file`, named after it: FILE.<pid>.partial (FILE.<pid>-<n>.partial if taken).
fs::path create_temporary(const fs::path& file, const fs::path& shown) {
  for (int n = 0;; ++n) {
    auto temporary = file;
    temporary +=
        n == 0 ? fmt::format(".{}.partial", ::getpid()) : fmt::format(".{}-{}.partial", ::getpid(), n);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temporary;
    }
    if (errno != EEXIST || n > 100) throw write_error(shown, std::strerror(errno));
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
    if (!target.temporary.empty()) ::unlink(target.temporary.c_str());
  for (const auto& path : scratch_) ::unlink(path.c_str());
}

OutputFiles::Target& OutputFiles::target_of(const fs::path& path) {
  for (auto& target : targets_)
    if (target.path == path) return target;
  throw std::logic_error(fmt::format("'{}' is not among the command's checked outputs", path.string()));
}

fs::path OutputFiles::temporary_for(const Target& target) {
  if (!target.temporary.empty()) return target.temporary;
  return create_temporary(target.file, target.path);
}

void OutputFiles::write(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  auto& target = target_of(path);
  const auto text = content_of(write);
  if (target.through) {
    write_text(target.file, O_TRUNC, 0, text, target.path);
    return;
  }
  target.temporary = temporary_for(target);
  write_text(target.temporary, O_TRUNC, mode_of(target.file), text, target.path);
}

fs::path OutputFiles::staged(const fs::path& path) {
  auto& target = target_of(path);
  if (target.through) return target.file;
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
    scratch_.push_back(target.temporary.string() + ".partial");
  }
  scratch_.push_back(reserved.string() + ".plot-data.json");
  return staged_plot_prefix_;
}

void OutputFiles::commit() {
  for (auto& target : targets_) {
    if (target.temporary.empty()) continue;
    const auto temporary = std::exchange(target.temporary, {});
    if (!target.through) {
      replace_with(target.file, temporary, target.path);
      continue;
    }
    std::ifstream in(temporary, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    ::unlink(temporary.c_str());
    write_text(target.file, O_TRUNC, 0, text.str(), target.path);
  }
}

}  // namespace spmdsim::cli
