// libFuzzer target: loading a SimGrid XML platform file (`--platform FILE`, topologies/xml_platform.hpp) into
// a Simulation. A file spmdsim refuses must give a ValueError naming the file; a crash, an abort (SimGrid's
// own, on a file it should not have been given) or a sanitizer report is a crash.
//
// SimGrid has one engine per process, so each input loads in a forked child. The child's coverage does not
// reach the fuzzer: it mutates around the seeds (corpus/xml_platform/) rather than following new branches.
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "memory_file.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/xml_platform.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const spmdsim::fuzz::MemoryFile file(data, size);
  const pid_t child = fork();
  if (child == 0) {
    try {
      const spmdsim::Simulation sim(spmdsim::topologies::xml_platform(file.path()));
    } catch (const spmdsim::ValueError&) {
    }
    _exit(0);  // no exit handlers: SimGrid's engine stays as it is, as the child ends
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) {
    std::perror("fork/waitpid");
    __builtin_trap();
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "loading the platform %s\n",
                 WIFSIGNALED(status) ? "was killed by a signal" : "exited with a failure status");
    __builtin_trap();
  }
  return 0;
}
