#include "common/forked_run.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
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

// A child started on `work`, the read end of its pipe in `fd`.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string text;
};

Child start_child(const std::string& what, const std::function<std::string()>& work) {
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
  return {pid, fds[0], {}};
}

// Reads what is ready of the child's pipe; true once it is closed.
bool read_some(Child& child) {
  char buffer[1 << 16];
  for (;;) {
    const auto n = ::read(child.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    child.text.append(buffer, static_cast<std::size_t>(n));
    return false;
  }
}

// The child's result once its pipe is closed: waits for it and turns its end into a result or an exception.
std::string finish_child(const std::string& what, Child& child) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string& text = child.text;
  if (WIFSIGNALED(status))
    throw std::runtime_error(fmt::format("{}: the simulation died with signal {} ({})", what,
                                         WTERMSIG(status), strsignal(WTERMSIG(status))));
  if (text.empty()) throw std::runtime_error(fmt::format("{}: the simulation ended without a result", what));
  if (text[0] == kUsageError) throw UsageError(text.substr(1));
  if (text[0] != kResult || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("{}: {}", what, text.substr(1)));
  return text.substr(1);
}

}  // namespace

std::string run_in_child(const std::string& what, const std::function<std::string()>& work) {
  return run_in_children({{what, work}}, 1, nullptr).front();
}

std::vector<std::string> run_in_children(const std::vector<ChildRun>& runs, int parallel,
                                         const std::function<void(std::size_t)>& ended) {
  std::vector<std::string> results(runs.size());
  std::vector<std::exception_ptr> errors(runs.size());
  std::map<std::size_t, Child> running;  // by the run's index
  std::size_t next = 0;
  std::size_t done = 0;
  while (done < runs.size()) {
    while (next < runs.size() && static_cast<int>(running.size()) < std::max(parallel, 1)) {
      running.emplace(next, start_child(runs[next].what, runs[next].work));
      ++next;
    }
    std::vector<pollfd> waiting;
    for (const auto& [index, child] : running) waiting.push_back({child.fd, POLLIN, 0});
    if (::poll(waiting.data(), waiting.size(), -1) < 0 && errno != EINTR)
      throw std::runtime_error(fmt::format("cannot wait for the simulations: {}", std::strerror(errno)));
    for (const auto& ready : waiting) {
      if (ready.revents == 0) continue;
      const auto it = std::find_if(running.begin(), running.end(),
                                   [&](const auto& entry) { return entry.second.fd == ready.fd; });
      if (!read_some(it->second)) continue;
      try {
        results[it->first] = finish_child(runs[it->first].what, it->second);
      } catch (...) {
        errors[it->first] = std::current_exception();
      }
      running.erase(it);
      ++done;
      if (ended) ended(done);
    }
  }
  // The first run's error in the runs' order, whichever child ended first.
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

}  // namespace spmdsim::cli
