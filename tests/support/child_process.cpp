#include "child_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace spmdsim::testing {
namespace {

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, bytes, size);
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, bytes, size);
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::vector<double> in_child_process(const std::function<std::vector<double>()>& fn) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(pipe_ends[0]);
    bool ok = false;
    try {
      const std::vector<double> values = fn();
      const std::uint64_t count = values.size();
      ok = write_all(pipe_ends[1], &count, sizeof count) &&
           write_all(pipe_ends[1], values.data(), count * sizeof(double));
    } catch (...) {
    }
    _exit(ok ? 0 : 1);
  }
  close(pipe_ends[1]);
  std::uint64_t count = 0;
  std::vector<double> values;
  bool complete = read_all(pipe_ends[0], &count, sizeof count);
  if (complete) {
    values.resize(count);
    complete = read_all(pipe_ends[0], values.data(), count * sizeof(double));
  }
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("the child process failed");
  return values;
}

}  // namespace spmdsim::testing
