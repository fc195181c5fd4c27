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

bool Platform::first_devices_switches_reduce(int p) const {
  if (p < 1 || static_cast<std::size_t>(p) > devices.size()) return false;
  const int local = first_devices_shape(p).front();
  for (int i = 0; i < p; ++i) {
    const std::string& node_switch = devices[static_cast<std::size_t>(i)].reducing_switch;
    if (node_switch.empty() || node_switch != devices[static_cast<std::size_t>(i - i % local)].reducing_switch)
      return false;
  }
  return true;
}

}  // namespace spmdsim
