#include "commands/kernels/published.hpp"

namespace spmdsim::cli::kernels {
namespace {

constexpr std::string_view kMamf = "§K.1 [MAMF] best shape of a sweep";
constexpr std::string_view kNvA100 = "§K.2 [NV-A100] cuBLAS m=n=k, read off the plot";
constexpr std::string_view kCrowdH100 = "§K.2 [crowd] #79 H100 SXM, torch.mm, host-timed";
constexpr std::string_view kPallas = "§K.2 [JAX-Pallas] TPU v5e XLA jnp.matmul, timed with dispatch";

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
  };
}

}  // namespace

const std::vector<PublishedMatmul>& published_matmuls() {
  static const std::vector<PublishedMatmul> table = make_table();
  return table;
}

}  // namespace spmdsim::cli::kernels
