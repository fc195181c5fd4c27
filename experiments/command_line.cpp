#include "command_line.hpp"

#include <fstream>

#include <fmt/format.h>

namespace spmdsim::cli {

SplitArguments split_simgrid_arguments(const std::string& program, const std::vector<std::string>& args) {
  SplitArguments split;
  split.simgrid.push_back(program);
  for (const auto& arg : args) {
    if (arg.starts_with("--cfg=") || arg.starts_with("--log=")) split.simgrid.push_back(arg);
    else split.ours.push_back(arg);
  }
  return split;
}

Argv::Argv(std::vector<std::string>& args) : argc_(static_cast<int>(args.size())) {
  for (auto& a : args) pointers_.push_back(a.data());
  pointers_.push_back(nullptr);
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  auto temporary = path;
  temporary += ".partial";
  {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
    write(out);
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary);
      throw std::runtime_error(fmt::format("failed while writing '{}'", path.string()));
    }
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace spmdsim::cli
