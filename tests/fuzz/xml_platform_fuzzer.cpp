// libFuzzer target: loading a SimGrid XML platform file (`--platform FILE`, topologies/xml_platform.hpp) into
// a Simulation, then one psum over all its devices, which crosses the platform's links and computes on its
// hosts. A file spmdsim refuses must give a ValueError naming the file; a crash, an abort (SimGrid's own, on
// a file it should not have been given) or a sanitizer report is a crash.
//
// SimGrid has one engine per process, so each input loads in a forked child. The child's coverage does not
// reach the fuzzer: it mutates around the seeds (corpus/xml_platform/) rather than following new branches.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "memory_file.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/xml_platform.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const spmdsim::fuzz::MemoryFile file(data, size);
  const pid_t child = fork();
  if (child == 0) {
    try {
      spmdsim::Simulation sim(spmdsim::topologies::xml_platform(file.path()));
      const auto total = spmdsim::pmap(
          [](const spmdsim::Args& a) -> spmdsim::Tree { return spmdsim::psum(a[0].array(), "i"); },
          {.axis_name = "i"});
      total(sim, {spmdsim::Array::zeros({sim.num_devices(), 4})});
    } catch (const spmdsim::ValueError&) {
    }
    _exit(0);  // no exit handlers: SimGrid's engine stays as it is, as the child ends
  }
  int status = 0;
  pid_t waited = -1;
  do waited = child < 0 ? -1 : waitpid(child, &status, 0);
  while (waited < 0 && errno == EINTR);  // libFuzzer's timer interrupts the wait now and then
  if (waited != child) {
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
