#include "commands/kernels/published.hpp"

#include <cmath>

#include <fmt/format.h>

namespace spmdsim::cli::kernels {
namespace {

constexpr std::string_view kMamf = "§K.1 [MAMF] best shape of a sweep";
constexpr std::string_view kNvA100 = "§K.2 [NV-A100] cuBLAS m=n=k, read off the plot";
constexpr std::string_view kCrowdH100 = "§K.2 [crowd] #79 H100 SXM, torch.mm, host-timed";
constexpr std::string_view kPallas = "§K.2 [JAX-Pallas] TPU v5e XLA jnp.matmul, timed with dispatch";
constexpr std::string_view kAzureA100 = "§K.2 [Azure-bench] ND A100 v4, cuBLASLt fp16";

MatmulShape cube(std::int64_t n) {
  return {1, n, n, n};
}

std::vector<PublishedMatmul> make_table() {
  using enum DType;
  return {
      // The points each preset's efficiency comes from.
      {"a100", bf16, {1, 1024, 10240, 5120}, 271.2, true, kMamf},
      {"h100", bf16, {1, 2048, 2048, 13312}, 794.5, true, kMamf},
      {"b200", bf16, {1, 1792, 16128, 3072}, 1745.0, true, kMamf},
      {"mi300x", bf16, {1, 10240, 15360, 8192}, 668.4, true, kMamf},
      {"a100", f32, cube(8192), 135, true, "§K.2 [NV-A100] TF32 at 8192^3, read off the plot"},
      {"h100", f32, cube(4096), 402.15, true, "§K.2 [crowd] #79 H100 SXM TF32 at 4096^3"},
      {"tpu_v5e", bf16, cube(8192), 181.82, true, kPallas},
      // Held out.
      {"a100", bf16, cube(1024), 90, false, kNvA100},
      {"a100", bf16, cube(1536), 150, false, kNvA100},
      {"a100", bf16, cube(2048), 197, false, kNvA100},
      {"a100", bf16, cube(4096), 257, false, kNvA100},
      {"a100", bf16, cube(6144), 275, false, kNvA100},
      {"a100", bf16, cube(8192), 290, false, kNvA100},
      {"a100", f32, cube(1024), 35, false, kNvA100},
      {"a100", f32, cube(2048), 95, false, kNvA100},
      {"a100", f32, cube(4096), 120, false, kNvA100},
      {"a100", f32, cube(6144), 130, false, kNvA100},
      {"h100", bf16, cube(1024), 176.62, false, kCrowdH100},
      {"h100", bf16, cube(2048), 676.59, false, kCrowdH100},
      {"h100", bf16, cube(4096), 788.72, false, kCrowdH100},
      {"h100", bf16, cube(8192), 797.51, false, kCrowdH100},
      {"h100", bf16, cube(10240), 719.72, false, kCrowdH100},
      {"h100", f16, cube(4096), 760.04, false, kCrowdH100},
      {"h100", f32, cube(1024), 119.60, false, kCrowdH100},
      {"h100", f32, cube(2048), 334.99, false, kCrowdH100},
      {"h100", f32, cube(8192), 372.05, false, kCrowdH100},
      {"h100", f32, cube(10240), 376.66, false, kCrowdH100},
      {"h100", bf16, {1, 4224, 2048, 8192}, 780.17, false, "§K.2 [gist] H100 CUTLASS via torch.compile"},
      {"tpu_v5e", bf16, cube(1024), 17.98, false, kPallas},
      {"tpu_v5e", bf16, cube(4096), 166.13, false, kPallas},
      {"a100", f16, cube(1024), 119.4, false, kAzureA100},
      {"a100", f16, cube(2048), 221.8, false, kAzureA100},
      {"a100", f16, cube(4096), 228.0, false, kAzureA100},
      {"a100", f16, cube(8192), 253.7, false, kAzureA100},
      {"a100", f16, cube(16384), 256.5, false, kAzureA100},
      {"a100", f16, {1, 1024, 2145, 1024}, 132.8, false, kAzureA100},
      {"a100", f16, {1, 6144, 12288, 12288}, 250.8, false, kAzureA100},
      {"a100", f16, {1, 802816, 192, 768}, 157.8, false, kAzureA100},
      {"mi300x", f32, cube(4000), 97.1906, false, "§K.2 [ROCm-accept] rocblas-bench sgemm, example output"},
  };
}

// Bytes over a time in microseconds, as GB/s.
double gbps_of(double bytes, double microseconds) {
  return bytes / (microseconds * 1e3);
}

// BabelStream (double): copy reads one array and writes one, triad reads two and writes one with 2 FLOPs per
// element. Its rate is of the best of its runs, each kernel timed by itself (host clock, synchronised).
PublishedStreaming babelstream(std::string_view device, std::string_view kernel, int log2_elements,
                               double gbps, std::string_view source) {
  const double elements = std::ldexp(1.0, log2_elements);
  const bool triad = kernel == "triad";
  return {.device = device,
          .kernel = kernel,
          .shape = fmt::format("2^{}", log2_elements),
          .dtype = DType::f64,
          .bytes = (triad ? 3 : 2) * 8 * elements,
          .flops = triad ? 2 * elements : 0,
          .gbps = gbps,
          .source = source};
}

// nvbench's elementwise add of two float16 arrays (cccl PR 7391): `back_to_back` its Batch GPU time (launches
// queued one after another), else its GPU Time (one launch between CUDA events, L2 flushed).
PublishedStreaming cccl_add(int log2_elements, double microseconds, bool back_to_back) {
  const double elements = std::ldexp(1.0, log2_elements);
  const double bytes = 3 * 2 * elements;
  return {.device = "b200",
          .kernel = "add",
          .shape = fmt::format("2^{}", log2_elements),
          .dtype = DType::f16,
          .bytes = bytes,
          .flops = elements,
          .gbps = gbps_of(bytes, microseconds),
          .back_to_back = back_to_back,
          .source = "§K.8 [cccl-7391] nvbench, B200"};
}

// Liger-Kernel's LayerNorm forward, float32, 4096 rows of n: one Triton kernel reading x and the weight and
// bias, writing y and each row's mean and rstd; triton.testing.do_bench (L2 flushed, CUDA events).
PublishedStreaming liger_layer_norm(std::string_view device, std::int64_t n, double milliseconds) {
  constexpr double rows = 4096;
  const auto cols = static_cast<double>(n);
  const double bytes = 8 * rows * cols + 8 * cols + 8 * rows;
  return {.device = device,
          .kernel = "layer_norm",
          .shape = fmt::format("4096 x {}", n),
          .dtype = DType::f32,
          .bytes = bytes,
          .flops = 8 * rows * cols,
          .gbps = gbps_of(bytes, milliseconds * 1e3),
          .source = "§K.8 [Liger] layer_norm forward, liger"};
}

// Liger-Kernel's SwiGLU of Megatron's layout, bfloat16, 8192 tokens of a gate and an up half of f each: one
// Triton kernel reading both halves and writing silu(gate) x up; do_bench as above.
PublishedStreaming liger_swiglu(std::int64_t f, double milliseconds) {
  const double elements = 8192 * static_cast<double>(f);
  const double bytes = 6 * elements;
  return {.device = "h100",
          .kernel = "swiglu",
          .shape = fmt::format("8192 x 2 x {}", f),
          .dtype = DType::bf16,
          .bytes = bytes,
          .flops = 5 * elements,
          .gbps = gbps_of(bytes, milliseconds * 1e3),
          .source = "§K.8 [Liger] megatron_swiglu forward, liger"};
}

std::vector<PublishedStreaming> make_streaming_table() {
  constexpr std::string_view kRocm = "§K.8 [ROCm-accept] BabelStream 5.0, example output";
  return {
      babelstream("a100", "copy", 25, 1610, "§K.8 [Azure-bench] ND A100 v4, BabelStream"),
      babelstream("a100", "triad", 25, 1700, "§K.8 [Azure-bench] ND A100 v4, BabelStream"),
      babelstream("a100_40gb", "copy", 25, 1394.571325, "§K.8 [ALCF] Polaris, BabelStream 4.0"),
      babelstream("a100_40gb", "triad", 25, 1377.425601, "§K.8 [ALCF] Polaris, BabelStream 4.0"),
      babelstream("h100", "copy", 25, 2900, "§K.8 [Azure-bench] ND H100 v5, BabelStream"),
      babelstream("h100", "triad", 25, 2970, "§K.8 [Azure-bench] ND H100 v5, BabelStream"),
      babelstream("h200", "copy", 25, 4010, "§K.8 [Azure-bench] ND H200 v5, BabelStream"),
      babelstream("h200", "triad", 25, 4150, "§K.8 [Azure-bench] ND H200 v5, BabelStream"),
      babelstream("mi300x", "copy", 28, 4255.995148, kRocm),
      babelstream("mi300x", "triad", 28, 3948.061647, kRocm),
      cccl_add(16, 1.996, true),
      cccl_add(20, 2.601, true),
      cccl_add(24, 15.245, true),
      cccl_add(28, 231.734, true),
      cccl_add(16, 6.166, false),
      cccl_add(20, 8.180, false),
      cccl_add(24, 23.033, false),
      cccl_add(28, 239.643, false),
      liger_layer_norm("a100", 1024, 0.030272),
      liger_layer_norm("a100", 2048, 0.049920),
      liger_layer_norm("a100", 4096, 0.088160),
      liger_layer_norm("a100", 8192, 0.165216),
      liger_layer_norm("a100", 16384, 0.322304),
      liger_layer_norm("h100", 1024, 0.018848),
      liger_layer_norm("h100", 2048, 0.029152),
      liger_layer_norm("h100", 4096, 0.051040),
      liger_layer_norm("h100", 8192, 0.094752),
      liger_layer_norm("h100", 16384, 0.184768),
      liger_swiglu(1024, 0.023328),
      liger_swiglu(2048, 0.039584),
      liger_swiglu(4096, 0.072512),
      liger_swiglu(8192, 0.137088),
      liger_swiglu(16384, 0.267008),
      liger_swiglu(32768, 0.527504),
  };
}

}  // namespace

const std::vector<PublishedMatmul>& published_matmuls() {
  static const std::vector<PublishedMatmul> table = make_table();
  return table;
}

const std::vector<PublishedStreaming>& published_streaming() {
  static const std::vector<PublishedStreaming> table = make_streaming_table();
  return table;
}

}  // namespace spmdsim::cli::kernels
