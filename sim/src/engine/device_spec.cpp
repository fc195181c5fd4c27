#include "spmdsim/device_spec.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim {

FlopsPerSecond DeviceSpec::peak_flops_for(DType dtype) const {
  if (auto it = peak_flops.find(dtype); it != peak_flops.end()) return it->second;
  if (auto it = peak_flops.find(DType::f32); it != peak_flops.end()) return it->second;
  // float32 is the fallback of every other dtype: asked for float32 itself, the message names it once.
  throw std::invalid_argument(dtype == DType::f32
                                  ? fmt::format("device '{}' has no peak FLOP/s for float32", model)
                                  : fmt::format("device '{}' has no peak FLOP/s for {} nor for float32", model,
                                                dtype_name(dtype)));
}

Seconds DeviceSpec::op_time(Flops flops, Bytes bytes, DType dtype) const {
  const double compute = flops > 0 ? flops / peak_flops_for(dtype) : 0.0;
  const double memory = bytes > 0 ? bytes / memory_bandwidth : 0.0;
  return launch_overhead + std::max(compute, memory);
}

void DeviceSpec::validate() const {
  auto positive = [this](const char* field, double value) {
    if (!(value > 0))
      throw std::invalid_argument(
          fmt::format("device '{}': {} must be positive (got {})", model, field, value));
  };
  if (peak_flops.empty())
    throw std::invalid_argument(fmt::format("device '{}': peak_flops needs at least one dtype", model));
  for (const auto& [dtype, flops] : peak_flops) positive("peak_flops", flops);
  positive("memory_capacity", memory_capacity);
  positive("memory_bandwidth", memory_bandwidth);
  if (!(launch_overhead >= 0) || std::isinf(launch_overhead))
    throw std::invalid_argument(fmt::format("device '{}': launch_overhead must be finite and >= 0 (got {})",
                                            model, launch_overhead));
}

}  // namespace spmdsim
