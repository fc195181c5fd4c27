#include "scratch_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim::testing {

ScratchDir::ScratchDir(std::string_view label) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / fmt::format("spmdsim-{}-XXXXXX", label)).string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a directory like " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path ScratchDir::write(const std::string& name, const std::string& text) const {
  const auto file = path_ / name;
  std::ofstream(file) << text;
  return file;
}

}  // namespace spmdsim::testing
