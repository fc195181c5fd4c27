// The dtype an array takes on a device: JAX's canonicalisation at the host->device boundary.
#pragma once

#include "spmdsim/array.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::detail {

// Without jax_enable_x64 (SimulationOptions::enable_x64 off) a float64 array becomes float32 on the devices.
inline Array device_dtype(const Array& host, bool enable_x64) {
  return enable_x64 || host.dtype() != DType::f64 ? host : astype(host, DType::f32);
}

}  // namespace spmdsim::detail
