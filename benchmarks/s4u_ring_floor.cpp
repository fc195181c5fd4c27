#include "s4u_ring_floor.hpp"

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

// Route latency times the network model's latency factor, as DeviceChannels::message_latency prices a message.
double message_latency(s4u::Host* from, s4u::Host* to) {
  std::vector<s4u::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  return latency * simgrid::config::get_value<double>("network/latency-factor");
}

}  // namespace

RingFloorRun run_s4u_ring_floor(int devices, std::int64_t bytes_per_device, int* argc, char** argv) {
  RingFloorRun run;
  const auto start = Clock::now();
  s4u::Engine engine(argc, argv);
  const Platform platform = topologies::switch_cluster(topologies::default_switch_cluster(devices))();
  run.setup_s = seconds_since(start);

  const int p = devices;
  const auto n = static_cast<double>(bytes_per_device);
  const auto floats = static_cast<double>(bytes_per_device / 4);
  // The booked ring all-reduce: 2(p - 1) pieces of n / p bytes each way, p - 1 reductions of a piece, each
  // priced as kernels::add's roofline without a launch (DeviceCommunicator::reduction_time).
  const int messages = 2 * (p - 1);
  const double bytes_each_way = messages * n / p;
  const DeviceSpec& spec = platform.devices.front().spec;
  const double piece = floats / p;
  const double reducing = (p - 1) * (spec.op_time(piece, 3 * 4 * piece, DType::f32) - spec.launch_overhead);

  std::vector<double> phase_spans(static_cast<std::size_t>(p));
  const auto run_start = Clock::now();
  for (int d = 0; d < p; ++d) {
    const PlatformDevice& on = platform.devices[static_cast<std::size_t>(d)];
    s4u::Host* device = s4u::Host::by_name(on.host);
    s4u::Host* host_cpu = s4u::Host::by_name(on.host_cpu.empty() ? platform.host_cpu : on.host_cpu);
    s4u::Host* next = s4u::Host::by_name(platform.devices[static_cast<std::size_t>((d + 1) % p)].host);
    s4u::Host* previous = s4u::Host::by_name(platform.devices[static_cast<std::size_t>((d + p - 1) % p)].host);
    s4u::Actor::create("device " + std::to_string(d), device, [=, &phase_spans] {
      s4u::Comm::sendto_async(host_cpu, device, n)->wait();
      if (p > 1) {
        const double phase_start = s4u::Engine::get_clock();
        static int token;
        int* received = nullptr;
        auto incoming = s4u::Mailbox::by_name("ring " + std::to_string(d))->get_async<int>(&received);
        auto outgoing =
            s4u::Mailbox::by_name("ring " + std::to_string((d + 1) % p))->put_async(&token, bytes_each_way);
        incoming->wait();
        outgoing->wait();
        const double latency = std::max(message_latency(device, next), message_latency(previous, device));
        s4u::this_actor::sleep_for((messages - 1) * latency);
        s4u::this_actor::execute(reducing * device->get_speed());
        phase_spans[static_cast<std::size_t>(d)] = s4u::Engine::get_clock() - phase_start;
      }
      s4u::Comm::sendto_async(device, host_cpu, n)->wait();
    });
  }
  engine.run();
  run.run_s = seconds_since(run_start);
  run.psum_simulated_s = *std::max_element(phase_spans.begin(), phase_spans.end());
  run.total_simulated_s = s4u::Engine::get_clock();
  return run;
}

}  // namespace spmdsim::benchmarks
