#include "common/forked_run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::cli {
namespace {

// The first byte of what the child writes says how it ended; the rest is the result or the message.
constexpr char kResult = 'R';
constexpr char kUsageError = 'U';
constexpr char kOtherError = 'E';

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent went away: nothing to tell it
    done += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const auto n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

[[noreturn]] void run_as_child(int fd, const std::function<std::string()>& work) {
  char outcome = kResult;
  std::string text;
  try {
    text = work();
  } catch (const UsageError& e) {
    outcome = kUsageError;
    text = e.what();
  } catch (const Error& e) {
    outcome = kOtherError;
    text = fmt::format("{}: {}", e.python_type(), e.what());
  } catch (const std::exception& e) {
    outcome = kOtherError;
    text = e.what();
  }
  write_all(fd, std::string(1, outcome) + text);
  std::cerr.flush();
  ::_exit(outcome == kResult ? 0 : 1);  // no atexit handlers: they belong to the parent
}

}  // namespace

std::string run_in_child(const std::string& what, const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error(fmt::format("{}: cannot create a pipe: {}", what, std::strerror(errno)));
  std::cout.flush();  // or the child would print the parent's buffered table a second time
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("{}: cannot fork: {}", what, std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    run_as_child(fds[1], work);
  }
  ::close(fds[1]);
  const std::string text = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw std::runtime_error(fmt::format("{}: the simulation died with signal {} ({})", what,
                                         WTERMSIG(status), strsignal(WTERMSIG(status))));
  if (text.empty()) throw std::runtime_error(fmt::format("{}: the simulation ended without a result", what));
  if (text[0] == kUsageError) throw UsageError(text.substr(1));
  if (text[0] != kResult || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("{}: {}", what, text.substr(1)));
  return text.substr(1);
}

}  // namespace spmdsim::cli
