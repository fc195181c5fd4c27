#include "memory_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace spmdsim::fuzz {

MemoryFile::MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("spmdsim-fuzz", 0)) {
  if (fd_ < 0 || write(fd_, data, size) != static_cast<ssize_t>(size)) {
    std::perror("memfd_create/write");
    std::abort();  // the harness itself is broken: stop the fuzzer
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemoryFile::~MemoryFile() {
  close(fd_);
}

}  // namespace spmdsim::fuzz
