#include "child_runs.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim::benchmarks {
namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds(const rusage& usage) {
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Reads the child's output until it closes the pipe (it has exited) or the deadline passes; returns false
// in the second case.
bool read_until_closed(int fd, std::string& output, double time_limit_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(time_limit_s);
  char buffer[4096];
  for (;;) {
    int wait_ms = -1;
    if (time_limit_s > 0) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::ceil(left * 1000));
    }
    pollfd ready{fd, POLLIN, 0};
    const int events = poll(&ready, 1, wait_ms);
    if (events < 0 && errno != EINTR) return true;  // cannot watch it: let waitpid tell what happened
    if (events <= 0) continue;
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got == 0) return true;
    if (got < 0) {
      if (errno == EINTR) continue;
      return true;
    }
    output.append(buffer, static_cast<std::size_t>(got));
  }
}

ChildRun failed(std::string why) {
  return {ChildRun::Outcome::failed, std::move(why), {}};
}

}  // namespace

ResultFields parse_result_line(std::string_view line, std::string_view tag) {
  ResultFields fields;
  std::stringstream in{std::string(line.substr(tag.size()))};
  for (std::string token; in >> token;) {
    const auto eq = token.find('=');
    if (eq == std::string::npos) throw std::runtime_error(fmt::format("malformed result line: {}", line));
    fields[token.substr(0, eq)] = std::stod(token.substr(eq + 1));
  }
  return fields;
}

ChildRun run_child(const ChildRequest& request) {
  std::vector<std::string> args{request.program, "--one", request.configuration};
  args.insert(args.end(), request.extra.begin(), request.extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) return failed(fmt::format("pipe: {}", std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) return failed(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string output;
  const bool exited = read_until_closed(fds[0], output, request.time_limit_s);
  if (!exited) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (!exited)
    return {ChildRun::Outcome::timed_out,
            fmt::format("timed out after {:g} s (cpu {:.1f} s)", request.time_limit_s, cpu_seconds(usage)),
            {}};
  if (WIFSIGNALED(status))
    return failed(fmt::format("killed by signal {} ({}){}", WTERMSIG(status), strsignal(WTERMSIG(status)),
                              output.empty() ? "" : ":\n" + output));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return failed(fmt::format("exit status {}:\n{}", WEXITSTATUS(status), output));
  std::stringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(request.result_tag)) continue;
    try {
      ResultFields fields = parse_result_line(line, request.result_tag);
      for (const auto& key : request.keys)
        if (!fields.contains(key)) return failed(fmt::format("result line without {}: {}", key, line));
      return {ChildRun::Outcome::finished, "", std::move(fields)};
    } catch (const std::exception& e) {
      return failed(e.what());
    }
  }
  return failed("no result line:\n" + output);
}

int benchmark_main(int argc, char** argv, std::string_view program, const ChildMain& child,
                   const ParentMain& parent) {
  try {
    if (argc >= 3 && std::string_view(argv[1]) == "--one") {
      std::vector<char*> child_argv{argv[0]};
      for (int i = 3; i < argc; ++i) child_argv.push_back(argv[i]);
      child_argv.push_back(nullptr);
      return child(argv[2], child_argv);
    }
    return parent(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return 2;
  }
}

}  // namespace spmdsim::benchmarks
