// A fresh directory under the system's temporary directory for one test's files (platforms, hostfiles, a
// command's output), removed with everything in it when the ScratchDir goes out of scope: when the test
// ends, whether it passed or failed.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace spmdsim::testing {

class ScratchDir {
 public:
  // A directory named spmdsim-<label>-XXXXXX (mkdtemp: unique, even for tests run in parallel).
  explicit ScratchDir(std::string_view label = "test");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;  // owns the directory
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A ScratchDir passes for its path, so tests write `dir / "run.json"` and hand `dir` to a function
  // taking a path; a temporary one lives until the end of the call it is given to.
  operator const std::filesystem::path&() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

  // Writes `text` to the file `name` in this directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

}  // namespace spmdsim::testing
