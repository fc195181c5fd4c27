// The published per-kernel measurements `spmdsim kernels` compares the device presets' kernel classes with:
// GEMM throughput by shape and dtype, and streaming kernels' achieved memory bandwidth by size. Each GEMM
// point says whether a preset's constant was taken from it (fit) or not (held out); no constant comes from a
// streaming point. docs/presets.md, "Kernel-class references", gives the sources.
#pragma once

#include <string>
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

// A streaming kernel: BabelStream's copy and triad, an elementwise add, a fused row-wise kernel (LayerNorm,
// SwiGLU). Its rate is its bytes (each input read once, each output written once) over its time, as the
// benchmark counts them.
struct PublishedStreaming {
  std::string_view device;  // a device preset
  std::string_view kernel;
  std::string shape;  // as printed
  DType dtype;
  double bytes = 0;
  double flops = 0;
  double gbps = 0;  // published GB/s (1e9 B/s), or bytes over the published time
  // Timed among kernels launched back to back; else alone, one kernel timed by itself.
  bool back_to_back = false;
  std::string_view source;
};

const std::vector<PublishedStreaming>& published_streaming();

}  // namespace spmdsim::cli::kernels
