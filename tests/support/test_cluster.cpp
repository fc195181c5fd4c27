#include "test_cluster.hpp"

#include <limits>

namespace spmdsim::testing {

topologies::SwitchClusterSpec round_numbers_cluster(int num_devices) {
  topologies::SwitchClusterSpec spec;
  spec.num_devices = num_devices;
  spec.device.model = "test-device";
  spec.device.peak_flops = {{DType::f32, 1e12}};
  spec.device.memory_capacity = 1e9;
  spec.device.memory_bandwidth = 1e11;
  spec.device.launch_overhead = 1e-6;
  spec.host_link = {10e9, 1e-6};
  spec.device_link = {100e9, 1e-6};
  return spec;
}

topologies::SwitchClusterSpec free_compute_cluster(int num_devices) {
  auto spec = round_numbers_cluster(num_devices);
  constexpr double inf = std::numeric_limits<double>::infinity();
  spec.device.peak_flops = {{DType::f32, inf}};
  spec.device.memory_bandwidth = inf;
  spec.device.launch_overhead = 0;
  return spec;
}

}  // namespace spmdsim::testing
