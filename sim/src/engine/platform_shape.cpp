// Platform's questions about its first p devices, which collectives over them (a pmap without `devices`) and
// the commands that report on such runs ask alike.
#include <algorithm>

#include "spmdsim/platform.hpp"

namespace spmdsim {

std::vector<int> Platform::first_devices_shape(int p) const {
  std::vector<int> shape;
  int block = 1;
  for (int extent : dimensions) {
    if (p % block != 0) break;
    const int k = p / block;
    if (k <= extent) {
      if (k > 1 || shape.empty()) shape.push_back(k);
      return shape;
    }
    shape.push_back(extent);
    block *= extent;
  }
  return {p};
}

bool Platform::first_devices_share_reducing_switch(int p) const {
  if (p < 1 || devices.empty() || devices.front().reducing_switch.empty()) return false;
  const std::string& first = devices.front().reducing_switch;
  return std::all_of(devices.begin(), devices.begin() + std::min<std::size_t>(devices.size(), p),
                     [&](const PlatformDevice& d) { return d.reducing_switch == first; });
}

}  // namespace spmdsim
