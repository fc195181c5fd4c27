#include "hostfile.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "text_fields.hpp"

namespace spmdsim::topologies::detail {

std::vector<HostfileEntry> read_hostfile(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    throw ValueError(fmt::format("hostfile '{}' does not exist or is not a regular file", name));
  std::ifstream in(file);
  if (!in) throw ValueError(fmt::format("hostfile '{}' cannot be read", name));

  std::vector<HostfileEntry> entries;
  std::map<std::string, int, std::less<>> first_line;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    std::string_view host = trimmed(text);
    if (host.empty()) continue;
    // smpirun splits at the last colon: "name:N" is N ranks on host "name".
    if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
      const std::optional<int> count = parse_int(host.substr(colon + 1));
      if (!count || *count < 1)
        throw ValueError(fmt::format("hostfile '{}', line {}: '{}' is not a host name or name:count", name,
                                     line, trimmed(text)));
      host = trimmed(host.substr(0, colon));
      if (*count != 1)
        throw ValueError(fmt::format(
            "hostfile '{}', line {}: '{}' puts {} devices on host '{}'; spmdsim runs one device per host "
            "(a device computes on its own host), so list each device's host once",
            name, line, trimmed(text), *count, host));
    }
    if (const auto [it, added] = first_line.try_emplace(std::string(host), line); !added)
      throw ValueError(
          fmt::format("hostfile '{}', line {}: host '{}' is listed again (first on line {}); each device "
                      "needs its own host",
                      name, line, host, it->second));
    entries.push_back({std::string(host), line});
  }
  if (entries.empty())
    throw ValueError(fmt::format(
        "hostfile '{}' lists no host; expected one host name per line, device i on line i", name));
  return entries;
}

}  // namespace spmdsim::topologies::detail
