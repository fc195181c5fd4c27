#include "spmdsim/device_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim {

FlopsPerSecond DeviceSpec::peak_flops_for(DType dtype) const {
  if (auto it = peak_flops.find(dtype); it != peak_flops.end()) return it->second;
  if (auto it = peak_flops.find(DType::f32); it != peak_flops.end()) return it->second;
  // float32 is the fallback of every other dtype: asked for float32 itself, the message names it once.
  throw std::invalid_argument(
      dtype == DType::f32
          ? fmt::format("device '{}' has no peak FLOP/s for float32", model)
          : fmt::format("device '{}' has no peak FLOP/s for {} nor for float32", model, dtype_name(dtype)));
}

Seconds DeviceSpec::op_time(Flops flops, Bytes bytes, DType dtype) const {
  const double compute = flops > 0 ? flops / peak_flops_for(dtype) : 0.0;
  const double memory = bytes > 0 ? bytes / memory_bandwidth : 0.0;
  return launch_overhead + std::max(compute, memory);
}

MatmulRate DeviceSpec::matmul_rate(DType dtype) const {
  if (auto it = matmul.find(dtype); it != matmul.end()) return it->second;
  return {peak_flops_for(dtype), 1.0};
}

double DeviceSpec::wave_efficiency(const MatmulShape& shape) const {
  if (tiling.units <= 0 || shape.m <= 0 || shape.n <= 0) return 1.0;
  // A GEMM smaller than a tile in one dimension gets a tile cut to that dimension (cuBLAS and XLA pick
  // smaller tiles for small operands), so only the waves' idle slots are lost.
  const std::int64_t tm = std::min(tiling.tile_m, shape.m);
  const std::int64_t tn = std::min(tiling.tile_n, shape.n);
  const std::int64_t tiles = shape.batch * ((shape.m + tm - 1) / tm) * ((shape.n + tn - 1) / tn);
  const std::int64_t waves = (tiles + tiling.units - 1) / tiling.units;
  return static_cast<double>(shape.batch * shape.m * shape.n) /
         (static_cast<double>(waves) * tiling.units * static_cast<double>(tm * tn));
}

Seconds DeviceSpec::matmul_time(Flops flops, const MatmulShape& shape, DType dtype) const {
  if (flops <= 0) return 0.0;
  const MatmulRate rate = matmul_rate(dtype);
  return flops / (rate.peak * rate.efficiency * wave_efficiency(shape));
}

std::string_view attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::flash2:
      return "FlashAttention-2";
    case AttentionKernel::flash1:
      return "FlashAttention (1.x)";
    case AttentionKernel::flash_triton:
      return "FlashAttention Triton";
  }
  return "?";
}

bool DeviceSpec::rates_attention_kernel(AttentionKernel kernel) const {
  return attention.empty() ||
         std::any_of(attention.begin(), attention.end(), [&](const auto& c) { return c.kernel == kernel; });
}

FlopsPerSecond DeviceSpec::attention_rate(const AttentionShape& shape, DType dtype) const {
  const MatmulRate rate = matmul_rate(dtype);
  if (attention.empty()) return rate.peak * rate.efficiency;
  const AttentionCurve* curve = nullptr;
  for (const AttentionCurve& c : attention)
    if (c.kernel == shape.kernel && (curve == nullptr || std::llabs(c.head_dim - shape.head_dim) <
                                                             std::llabs(curve->head_dim - shape.head_dim)))
      curve = &c;
  if (curve == nullptr)
    throw ValueError(fmt::format("device '{}' has no published rate of the {} attention kernel", model,
                                 attention_kernel_name(shape.kernel)));
  const auto& points = curve->points;
  if (shape.seq <= points.front().first) return rate.peak * points.front().second;
  if (shape.seq >= points.back().first) return rate.peak * points.back().second;
  const auto upper =
      std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.first >= shape.seq; });
  const auto lower = upper - 1;
  const double t = std::log2(static_cast<double>(shape.seq) / static_cast<double>(lower->first)) /
                   std::log2(static_cast<double>(upper->first) / static_cast<double>(lower->first));
  return rate.peak * (lower->second + t * (upper->second - lower->second));
}

Seconds DeviceSpec::kernel_time(const OpCost& cost, DType dtype) const {
  double compute = 0.0;
  if (cost.flops > 0) {
    if (cost.attention)
      compute = cost.flops / attention_rate(*cost.attention, dtype);
    else if (cost.matmul)
      compute = matmul_time(cost.flops, *cost.matmul, dtype);
    else
      compute = cost.flops / peak_flops_for(dtype);
  }
  const double memory = cost.bytes > 0 ? cost.bytes / (memory_bandwidth * memory_efficiency) : 0.0;
  return launch_overhead + std::max(compute, memory);
}

void DeviceSpec::validate() const {
  auto positive = [this](const char* field, double value) {
    if (!(value > 0))
      throw std::invalid_argument(
          fmt::format("device '{}': {} must be positive (got {})", model, field, value));
  };
  auto fraction = [this](const char* field, double value) {
    if (!(value > 0 && value <= 1))
      throw std::invalid_argument(
          fmt::format("device '{}': {} must be in (0, 1] (got {})", model, field, value));
  };
  if (peak_flops.empty())
    throw std::invalid_argument(fmt::format("device '{}': peak_flops needs at least one dtype", model));
  for (const auto& [dtype, flops] : peak_flops) positive("peak_flops", flops);
  positive("memory_capacity", memory_capacity);
  positive("memory_bandwidth", memory_bandwidth);
  if (!(launch_overhead >= 0) || std::isinf(launch_overhead))
    throw std::invalid_argument(
        fmt::format("device '{}': launch_overhead must be finite and >= 0 (got {})", model, launch_overhead));
  for (const auto& [dtype, rate] : matmul) {
    positive("matmul peak", rate.peak);
    fraction("matmul efficiency", rate.efficiency);
  }
  fraction("memory_efficiency", memory_efficiency);
  if (tiling.units < 0 || (tiling.units > 0 && (tiling.tile_m < 1 || tiling.tile_n < 1)))
    throw std::invalid_argument(
        fmt::format("device '{}': a matmul tiling needs units >= 0 and, with units, tiles of at least 1x1 "
                    "(got {} units of {}x{})",
                    model, tiling.units, tiling.tile_m, tiling.tile_n));
  for (const AttentionCurve& curve : attention) {
    if (curve.points.empty())
      throw std::invalid_argument(fmt::format("device '{}': an attention curve needs points", model));
    for (std::size_t i = 0; i < curve.points.size(); ++i) {
      fraction("attention efficiency", curve.points[i].second);
      if (curve.points[i].first < 1 || (i > 0 && curve.points[i].first <= curve.points[i - 1].first))
        throw std::invalid_argument(fmt::format(
            "device '{}': attention curve points must have increasing sequence lengths >= 1", model));
    }
  }
}

}  // namespace spmdsim
