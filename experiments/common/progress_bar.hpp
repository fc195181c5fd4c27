// A long command's progress on a terminal: the collectives sweep's rows, train's and memory's simulations.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

namespace spmdsim::cli {

// Items done out of the total ("12/40 rows"), with the wall time, redrawn in place on a terminal's stderr.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled, std::string items = "rows")
      : total_(total),
        enabled_(enabled),
        items_(std::move(items)),
        start_(std::chrono::steady_clock::now()) {}

  void show(std::size_t done);
  // Erases the bar so that a line written to a terminal's stdout is not mixed with it.
  void clear();
  double elapsed() const;

 private:
  std::size_t total_;
  bool enabled_;
  std::string items_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace spmdsim::cli
