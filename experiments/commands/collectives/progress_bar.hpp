// The sweep's progress on a terminal.
#pragma once

#include <chrono>
#include <cstddef>

namespace spmdsim::cli::collectives {

// Rows done out of the total, with the wall time, redrawn in place on a terminal's stderr.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled)
      : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

  void show(std::size_t done);
  // Erases the bar so that a line written to a terminal's stdout is not mixed with it.
  void clear();
  double elapsed() const;

 private:
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace spmdsim::cli::collectives
