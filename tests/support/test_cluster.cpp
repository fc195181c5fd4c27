#include "test_cluster.hpp"

#include <limits>

#include "spmdsim/topologies/accelerator_node.hpp"

namespace spmdsim::testing {

topologies::SwitchClusterSpec round_numbers_cluster(int num_devices) {
  topologies::SwitchClusterSpec spec;
  spec.num_devices = num_devices;
  spec.device.model = "test-device";
  spec.device.peak_flops = {{DType::f32, 1e12}};
  spec.device.memory_capacity = 1e9;
  spec.device.memory_bandwidth = 1e11;
  spec.device.launch_overhead = kRoundNumbersLaunch;
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

PlatformBuilder rccl_mesh_node(const RcclNode& rccl) {
  topologies::NodeSpec node;
  node.devices_per_node = 8;
  node.device = free_compute_cluster(1).device;
  node.fabric = topologies::NodeFabric::full_mesh;
  node.device_link = {100e9, 1e-6};
  node.host_link = {10e9, 1e-6};
  node.nic = {25e9, 1e-6};
  node.rccl = rccl;
  return topologies::accelerator_node(node);
}

std::string smpi_cluster_xml() {
  return "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">\n"
         "  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"125MBps\" "
         "lat=\"50us\" bb_bw=\"2.25GBps\" bb_lat=\"500us\"/>\n"
         "</platform>\n";
}

}  // namespace spmdsim::testing
