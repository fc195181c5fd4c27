#include "hostfile.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::topologies::detail {
namespace {

std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

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
      const std::string_view count_text = trimmed(host.substr(colon + 1));
      int count = 0;
      const auto [end, parsed] =
          std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
      if (count_text.empty() || parsed != std::errc() || end != count_text.data() + count_text.size() ||
          count < 1)
        throw ValueError(fmt::format("hostfile '{}', line {}: '{}' is not a host name or name:count", name,
                                     line, trimmed(text)));
      host = trimmed(host.substr(0, colon));
      if (count != 1)
        throw ValueError(fmt::format(
            "hostfile '{}', line {}: '{}' puts {} devices on host '{}'; spmdsim runs one device per host "
            "(a device computes on its own host), so list each device's host once",
            name, line, trimmed(text), count, host));
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
