// Units of the quantities spmdsim passes around. All SI: converted at the boundary (config, presets),
// never inside the engine.
#pragma once

namespace spmdsim {

using Seconds = double;
using Bytes = double;
using BytesPerSecond = double;
using Flops = double;
using FlopsPerSecond = double;

}  // namespace spmdsim
