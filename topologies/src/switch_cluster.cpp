#include "spmdsim/topologies/switch_cluster.hpp"

#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>

#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::topologies {
namespace {

// A device's SimGrid speed only converts its roofline time into an amount of work; any value will do.
constexpr double kDeviceHostSpeed = 1e12;

// The links of the cluster, indexed by device.
struct SwitchLinks {
  std::vector<simgrid::s4u::Link*> h2d, d2h, up, down;
};

}  // namespace

DeviceSpec a100_like_device() {
  DeviceSpec spec;
  spec.model = "A100-SXM4-80GB";
  spec.peak_flops = {{DType::f32, 19.5e12},   // FP32 non-tensor [S1,S2]
                     {DType::bf16, 312e12},   // dense BF16 tensor [S1,S2]
                     {DType::f16, 312e12}};   // dense FP16 tensor [S1,S2]
  spec.memory_capacity = 80.0 * (1ull << 30);  // "80 GB" HBM2e, in GiB as vendors mean it
  spec.memory_bandwidth = 2039e9;              // NVIDIA datasheet via [S2,S4]
  spec.launch_overhead = 2e-6;                 // assumed: not a published figure
  return spec;
}

SwitchClusterSpec default_switch_cluster(int num_devices) {
  SwitchClusterSpec spec;
  spec.num_devices = num_devices;
  spec.device = a100_like_device();
  spec.host_link = {31.5e9, 1e-6};    // PCIe 4.0 x16 per direction [S1]; latency assumed
  spec.device_link = {300e9, 1e-6};   // NVLink3 per GPU per direction [S1]; latency assumed
  return spec;
}

PlatformBuilder switch_cluster(SwitchClusterSpec spec) {
  if (spec.num_devices < 1)
    throw ValueError(fmt::format("switch cluster: num_devices must be at least 1 (got {})", spec.num_devices));
  check_link("switch cluster host link", spec.host_link);
  check_link("switch cluster device link", spec.device_link);
  spec.device.validate();
  return detail::fabric_platform([spec] {
    // Endpoint -1 is the host CPU, 0..N-1 the devices.
    auto links = std::make_shared<SwitchLinks>();
    PathZone zone("switch_cluster", [links](int from, int to, std::vector<simgrid::s4u::Link*>& route) {
      if (from < 0) route.push_back(links->h2d[static_cast<std::size_t>(to)]);
      else if (to < 0) route.push_back(links->d2h[static_cast<std::size_t>(from)]);
      else {
        route.push_back(links->up[static_cast<std::size_t>(from)]);
        route.push_back(links->down[static_cast<std::size_t>(to)]);
      }
    });
    Platform platform;
    platform.description =
        fmt::format("switch: {} x {}, device link {:g} GB/s, host link {:g} GB/s", spec.num_devices,
                    spec.device.model, spec.device_link.bandwidth / 1e9, spec.host_link.bandwidth / 1e9);
    platform.host_cpu = zone.add_host("host", spec.host_speed, -1)->get_name();
    for (int i = 0; i < spec.num_devices; ++i) {
      const std::string name = fmt::format("dev{}", i);
      platform.devices.push_back({name, zone.add_host(name, kDeviceHostSpeed, i)->get_name(), spec.device});
      links->h2d.push_back(zone.add_link(name + ".pcie.h2d", spec.host_link.bandwidth, spec.host_link.latency));
      links->d2h.push_back(zone.add_link(name + ".pcie.d2h", spec.host_link.bandwidth, spec.host_link.latency));
      links->up.push_back(zone.add_link(name + ".fabric.up", spec.device_link.bandwidth, spec.device_link.latency));
      links->down.push_back(
          zone.add_link(name + ".fabric.down", spec.device_link.bandwidth, spec.device_link.latency));
    }
    zone.seal();
    return platform;
  });
}

}  // namespace spmdsim::topologies
