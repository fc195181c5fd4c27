#include "s4u_psum_skeleton.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include "spmdsim/platform.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim::benchmarks {
namespace {

namespace s4u = simgrid::s4u;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The platform's network settings that the command line left at their defaults, as Simulation applies them
// (before the first zone is made: SimGrid fixes its network model then).
void apply_network_config(const PlatformBuilder& builder) {
  for (const std::string& setting : builder.network_config())
    if (simgrid::config::is_default(setting.substr(0, setting.find(':')).c_str()))
      s4u::Engine::set_config(setting);
}

}  // namespace

std::int64_t RingDevice::piece_floats(int k) const {
  return floats / devices + (k < floats % devices ? 1 : 0);
}

double RingDevice::reduction_s(std::int64_t elements) const {
  const auto n = static_cast<double>(elements);
  return std::max(spec->op_time(n, 3 * 4 * n, DType::f32) - spec->launch_overhead, 0.0);
}

double RingDevice::message_latency(s4u::Host* from, s4u::Host* to) {
  std::vector<s4u::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  return latency * simgrid::config::get_value<double>("network/latency-factor");
}

S4uPsumRun run_s4u_psum(int devices, std::int64_t bytes_per_device, int* argc, char** argv,
                        const std::function<void(const RingDevice&)>& all_reduce) {
  S4uPsumRun run;
  const auto start = Clock::now();
  s4u::Engine engine(argc, argv);
  const PlatformBuilder builder = topologies::switch_cluster(topologies::default_switch_cluster(devices));
  apply_network_config(builder);
  const Platform platform = builder();
  run.setup_s = seconds_since(start);

  const int p = devices;
  const auto n = static_cast<double>(bytes_per_device);
  auto host_of = [&platform](int d) {
    return s4u::Host::by_name(platform.devices[static_cast<std::size_t>(d)].host);
  };
  std::vector<double> spans(static_cast<std::size_t>(p));
  const auto run_start = Clock::now();
  for (int d = 0; d < p; ++d) {
    const PlatformDevice& on = platform.devices[static_cast<std::size_t>(d)];
    const RingDevice ring{
        d, p, bytes_per_device / 4, host_of(d), host_of((d + 1) % p), host_of((d + p - 1) % p), &on.spec};
    s4u::Host* host_cpu = s4u::Host::by_name(on.host_cpu.empty() ? platform.host_cpu : on.host_cpu);
    s4u::Actor::create("device " + std::to_string(d), ring.host, [ring, host_cpu, n, &spans, &all_reduce] {
      s4u::Comm::sendto_async(host_cpu, ring.host, n)->wait();
      if (ring.devices > 1) {
        const double all_reduce_start = s4u::Engine::get_clock();
        s4u::this_actor::sleep_for(ring.spec->launch_overhead);  // the kernel's launch, as a psum waits it
        all_reduce(ring);
        spans[static_cast<std::size_t>(ring.rank)] = s4u::Engine::get_clock() - all_reduce_start;
      }
      s4u::Comm::sendto_async(ring.host, host_cpu, n)->wait();
    });
  }
  engine.run();
  run.run_s = seconds_since(run_start);
  run.psum_simulated_s = *std::max_element(spans.begin(), spans.end());
  run.total_simulated_s = s4u::Engine::get_clock();
  return run;
}

}  // namespace spmdsim::benchmarks
