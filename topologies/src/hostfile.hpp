// SMPI hostfiles (smpirun -hostfile, SimGrid's smpi_deployment.cpp): one host name per line, rank i on the
// i-th; blank lines are skipped and "name:N" stands for N lines of "name". spmdsim reads device i from
// line i, one device per host, since a device computes on its own SimGrid host.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace spmdsim::topologies::detail {

struct HostfileEntry {
  std::string host;
  int line = 0;  // 1-based, for messages
};

// The hosts of `file`, in order. Throws ValueError "hostfile 'FILE' ..." for a missing or unreadable file, a
// file that lists no host, a line "name:N" with N other than 1 or not a number, and a host listed twice
// (naming both lines).
std::vector<HostfileEntry> read_hostfile(const std::filesystem::path& file);

}  // namespace spmdsim::topologies::detail
