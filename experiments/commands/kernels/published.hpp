// The published per-kernel measurements `spmdsim kernels` compares the device presets' kernel classes with:
// GEMM throughput by shape and dtype. Each point says whether a preset's constant was taken from it (fit)
// or not (held out); docs/presets.md, "Kernel-class references", gives the sources.
#pragma once

#include <string_view>
#include <vector>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/dtype.hpp"

namespace spmdsim::cli::kernels {

struct PublishedMatmul {
  std::string_view device;  // a device preset
  DType dtype;
  MatmulShape shape;
  double tflops = 0;  // published achieved TFLOP/s
  bool fit = false;   // the preset's efficiency was taken from this point
  std::string_view source;
};

const std::vector<PublishedMatmul>& published_matmuls();

}  // namespace spmdsim::cli::kernels
