#include "spmdsim/simulation.hpp"

#include <map>
#include <memory>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

#include "host_copies.hpp"
#include "runtime.hpp"
#include "spmdsim/residency.hpp"

namespace spmdsim {
namespace {

// argv for a Simulation made without a command line: SimGrid wants a program name.
char program_name[] = "spmdsim";
char* default_argv[] = {program_name, nullptr};
int default_argc = 1;

struct Fetch {
  int device;
  Array shard;
  const detail::HostCopy* arrival;  // a put's copy to the device, waited for first; null for pmap results
};

}  // namespace

std::vector<std::string> alpha_beta_config() {
  return {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0", "network/optim:Full"};
}

Simulation::Simulation(const PlatformBuilder& builder, SimulationOptions options)
    : Simulation(&default_argc, default_argv, builder, std::move(options)) {}

Simulation::Simulation(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options)
    : runtime_(std::make_unique<detail::Runtime>(argc, argv, builder, std::move(options))) {}

Simulation::~Simulation() = default;

int Simulation::num_devices() const { return runtime_->num_devices(); }
const Platform& Simulation::platform() const { return runtime_->platform(); }
Seconds Simulation::now() const { return simgrid::s4u::Engine::get_clock(); }
const std::string& Simulation::algorithm(CollectiveKind kind) const { return runtime_->algorithm(kind); }
SimulationReport Simulation::report() const { return runtime_->report(); }

Tree Simulation::device_get(const Tree& tree) {
  // One shard per device for split results; one copy (device 0's) for replicated ones, as JAX reads them.
  std::vector<Fetch> fetches;
  for (const auto& leaf : tree.leaves()) {
    const auto& residency = leaf.residency();
    if (!residency || residency->fetched) continue;
    residency->fetched = true;
    const std::size_t count = residency->axis ? residency->devices.size() : 1;
    for (std::size_t i = 0; i < count; ++i)
      fetches.push_back({residency->devices[i], residency->shards[i],
                         residency->arrivals.empty() ? nullptr : residency->arrivals[i].get()});
  }
  if (!fetches.empty()) {
    CallReport call;
    call.name = "device_get";
    call.start = now();
    std::vector<int> devices;
    for (const auto& f : fetches)
      if (std::find(devices.begin(), devices.end(), f.device) == devices.end()) devices.push_back(f.device);
    call.devices = devices;
    call.times.resize(devices.size());
    call.spans.resize(devices.size());
    auto& runtime = *runtime_;
    for (std::size_t k = 0; k < devices.size(); ++k) {
      const int device = devices[k];
      simgrid::s4u::Actor::create("device_get", runtime.platform().devices[static_cast<std::size_t>(device)].host,
                                  [&runtime, &fetches, &call, device, k] {
                                    std::vector<simgrid::s4u::CommPtr> sends;
                                    const Seconds start = simgrid::s4u::Engine::get_clock();
                                    for (const auto& f : fetches)
                                      if (f.device == device && f.arrival != nullptr) f.arrival->wait_arrival();
                                    const Seconds arrived = simgrid::s4u::Engine::get_clock();
                                    if (arrived > start)
                                      call.spans[k].push_back({SpanKind::transfer, "host->device", start, arrived});
                                    for (const auto& f : fetches)
                                      if (f.device == device)
                                        sends.push_back(runtime.channel(device, detail::kHostEndpoint)
                                                            ->put_async(new Array(f.shard), f.shard.nbytes()));
                                    simgrid::s4u::Comm::wait_all(sends);
                                    const Seconds end = simgrid::s4u::Engine::get_clock();
                                    call.times[k].transfer += end - start;
                                    call.spans[k].push_back({SpanKind::transfer, "device->host", arrived, end});
                                  });
    }
    // Each host CPU receives what its own devices send (one per node on multi-node platforms).
    std::map<simgrid::s4u::Host*, std::vector<std::size_t>> fetches_by_cpu;
    for (std::size_t i = 0; i < fetches.size(); ++i)
      fetches_by_cpu[runtime.platform().devices[static_cast<std::size_t>(fetches[i].device)].host_cpu].push_back(i);
    for (const auto& [cpu, indices] : fetches_by_cpu)
      simgrid::s4u::Actor::create("host", cpu, [&runtime, &fetches, indices = indices] {
        std::vector<simgrid::s4u::CommPtr> gets;
        std::vector<Array*> received(indices.size(), nullptr);
        for (std::size_t k = 0; k < indices.size(); ++k)
          gets.push_back(
              runtime.channel(fetches[indices[k]].device, detail::kHostEndpoint)->get_async<Array>(&received[k]));
        simgrid::s4u::Comm::wait_all(gets);
        for (auto* r : received) delete r;
      });
    runtime.run();
    call.end = now();
    for (auto& times : call.times) times.idle = (call.end - call.start) - times.transfer;
    runtime.add_call(std::move(call));
  }
  return tree.map([](const Array& leaf) { return leaf.residency() ? leaf.with_residency(nullptr) : leaf; });
}

}  // namespace spmdsim
