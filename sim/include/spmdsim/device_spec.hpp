// What a simulated device is: its compute peaks per dtype, its memory, and the achieved rates of its kernel
// classes (docs/training.md, "Kernel classes"): matmuls on the matrix unit at an efficiency that depends on
// their shape, fused attention at a published efficiency, everything else at the achieved memory bandwidth,
// each kernel paying one launch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmdsim/dtype.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

// A dot_general as the matrix unit sees it: `batch` independent [m, k] x [k, n] products.
struct MatmulShape {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// The fused attention kernels with published rates: FlashAttention-2 (flash-attn 2.x), FlashAttention's
// first CUDA kernel (flash-attn 1.x, which PyTorch 2.0 and 2.1 run for scaled_dot_product_attention) and its
// Triton kernel (flash-attn 1.x's flash_attn_triton, which MosaicML's llm-foundry runs as attn_impl triton).
enum class AttentionKernel { flash2, flash1, flash_triton };
std::string_view attention_kernel_name(AttentionKernel kernel);

// A fused (FlashAttention-style) attention kernel: its sequence length, head dimension and implementation.
struct AttentionShape {
  std::int64_t seq = 0;
  std::int64_t head_dim = 0;
  AttentionKernel kernel = AttentionKernel::flash2;
};

// The FLOPs and bytes of one kernel, and its class where it is not a streaming (memory-bound) kernel.
struct OpCost {
  double flops = 0;
  double bytes = 0;  // read + written
  std::optional<MatmulShape> matmul;
  std::optional<AttentionShape> attention;
};

// The matrix unit's rate for matmuls of one operand dtype.
struct MatmulRate {
  // Dense peak of the unit these operands run on: for float32 that is what JAX's DEFAULT precision picks
  // (TF32 tensor cores on NVIDIA GPUs since Ampere, one bfloat16 pass on the TPU's MXU).
  FlopsPerSecond peak = 0;
  // Achieved fraction of `peak` on a large, well-shaped GEMM.
  double efficiency = 1;
  bool operator==(const MatmulRate&) const = default;
};

// How a GEMM is cut into output tiles that the device's `units` (SMs, MXUs) run in waves: a GEMM of T tiles
// takes ceil(T / units) waves of one tile's time each, so a GEMM whose tiles leave units idle in its last
// wave, or that has fewer tiles than units, runs below the large-GEMM rate. units 0: no quantisation.
struct MatmulTiling {
  std::int64_t tile_m = 0;
  std::int64_t tile_n = 0;
  int units = 0;
  bool operator==(const MatmulTiling&) const = default;
};

// A fused attention kernel's achieved fraction of the matmul peak, forward + backward, causal, by
// sequence length, for one head dimension (points sorted by seq).
struct AttentionCurve {
  std::int64_t head_dim = 0;
  std::vector<std::pair<std::int64_t, double>> points;  // (seq, fraction of the matmul peak)
  AttentionKernel kernel = AttentionKernel::flash2;
  bool operator==(const AttentionCurve&) const = default;
};

struct DeviceSpec {
  std::string model = "generic";
  // Dense peak per dtype of the vector units (elementwise work); a dtype missing here runs at the f32
  // peak. Infinity makes compute free (timing tests use it to isolate communication).
  std::map<DType, FlopsPerSecond> peak_flops;
  Bytes memory_capacity = 0;
  BytesPerSecond memory_bandwidth = 0;
  Seconds launch_overhead = 0;
  // The kernel classes. Left empty (the default), a matmul runs at peak_flops_for(dtype), a streaming
  // kernel at memory_bandwidth, attention at the matmul rate: the plain roofline.
  std::map<DType, MatmulRate> matmul;
  MatmulTiling tiling;
  double memory_efficiency = 1;  // achieved fraction of memory_bandwidth for streaming kernels
  std::vector<AttentionCurve> attention;

  FlopsPerSecond peak_flops_for(DType dtype) const;
  // Roofline time of one op: launch overhead + max(flops / peak, bytes / bandwidth), at the nominal rates.
  // Collectives reduce with it (their reduction runs inside the communication kernel).
  Seconds op_time(Flops flops, Bytes bytes, DType dtype) const;
  // Time of one kernel by its class: launch_overhead + max(compute, bytes / (memory_bandwidth *
  // memory_efficiency)), where compute is matmul_time for a matmul, attention_time for fused attention,
  // flops / peak_flops_for(dtype) otherwise.
  Seconds kernel_time(const OpCost& cost, DType dtype) const;
  // The matrix unit's time for `flops` of a GEMM of `shape`: flops / (peak * efficiency) divided by the
  // tiling's wave efficiency (the fraction of the units' tile slots the GEMM fills).
  Seconds matmul_time(Flops flops, const MatmulShape& shape, DType dtype) const;
  // The achieved rate of the fused attention kernel (its kernel's curve of the nearest head dimension, linear
  // in log2(seq) between points, flat beyond the ends); without curves, the matmul rate. A ValueError when
  // the device has curves but none for the shape's kernel.
  FlopsPerSecond attention_rate(const AttentionShape& shape, DType dtype) const;
  // Whether attention_rate has a rate for `kernel`: a curve of it, or no curves at all.
  bool rates_attention_kernel(AttentionKernel kernel) const;
  // The matrix unit's rate for a dtype: its entry in `matmul`, else peak_flops_for(dtype) at efficiency 1.
  MatmulRate matmul_rate(DType dtype) const;
  // The fraction of tile slots a GEMM fills: (batch * m * n) / (waves * units * tile_m * tile_n).
  double wave_efficiency(const MatmulShape& shape) const;
  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
  bool operator==(const DeviceSpec&) const = default;
};

}  // namespace spmdsim
