// A fuzz input as a file that code under test opens by name, held in memory (memfd_create): nothing is
// written to disk, so a crashing input leaves no file behind either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace spmdsim::fuzz {

class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size);
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;  // owns the descriptor
  MemoryFile& operator=(const MemoryFile&) = delete;

  // /proc/self/fd/N: a name the process (and a child it forks) can open.
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace spmdsim::fuzz
