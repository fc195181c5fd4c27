// What a simulated device is: its compute peaks per dtype, its memory and the fixed cost of an op launch.
#pragma once

#include <map>
#include <string>

#include "spmdsim/dtype.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim {

struct DeviceSpec {
  std::string model = "generic";
  // Dense peak per dtype. A dtype missing here runs at the f32 peak. Infinity makes compute free
  // (timing tests use it to isolate communication).
  std::map<DType, FlopsPerSecond> peak_flops;
  Bytes memory_capacity = 0;
  BytesPerSecond memory_bandwidth = 0;
  Seconds launch_overhead = 0;

  FlopsPerSecond peak_flops_for(DType dtype) const;
  // Roofline time of one op: launch overhead + max(flops / peak, bytes / bandwidth).
  Seconds op_time(Flops flops, Bytes bytes, DType dtype) const;
  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
};

}  // namespace spmdsim
