#include "common/progress_bar.hpp"

#include <iostream>
#include <string>

#include <fmt/format.h>

namespace spmdsim::cli {

void ProgressBar::show(std::size_t done) {
  if (!enabled_) return;
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
  std::cerr << fmt::format("\r[{}{}] {}/{} {}, {:.1f} s", std::string(filled, '#'),
                           std::string(kWidth - filled, '.'), done, total_, items_, elapsed())
            << std::flush;
}

void ProgressBar::clear() {
  if (enabled_) std::cerr << "\r\033[K" << std::flush;
}

double ProgressBar::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace spmdsim::cli
