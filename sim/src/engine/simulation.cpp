#include "spmdsim/simulation.hpp"

#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/s4u/Actor.hpp>

#include "engine/host_copies.hpp"
#include "engine/host_transfer.hpp"
#include "engine/runtime.hpp"
#include "spmdsim/errors.hpp"
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

int Simulation::num_devices() const {
  return runtime_->num_devices();
}
const Platform& Simulation::platform() const {
  return runtime_->platform();
}
Seconds Simulation::now() const {
  return simgrid::s4u::Engine::get_clock();
}
const std::string& Simulation::algorithm(CollectiveKind kind) const {
  return runtime_->collectives().algorithm(kind);
}
SimulationReport Simulation::report() const {
  return runtime_->report();
}

Tree Simulation::device_get(const Tree& tree) {
  // One shard per device for split results; one copy (device 0's) for replicated ones, as JAX reads them.
  std::vector<Fetch> fetches;
  for (const auto& leaf : tree.leaves()) {
    const auto& residency = leaf.residency();
    if (residency && residency->deleted)
      throw RuntimeError(fmt::format("Array has been deleted with shape={}[{}].", dtype_name(leaf.dtype()),
                                     fmt::join(leaf.shape(), ",")));
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
    // The devices read, in order of first appearance, and the fetches of each.
    std::vector<int> devices;
    std::vector<std::vector<const Fetch*>> fetches_of;
    std::map<int, std::size_t> index_of;
    for (const auto& f : fetches) {
      const auto [at, added] = index_of.try_emplace(f.device, devices.size());
      if (added) {
        devices.push_back(f.device);
        fetches_of.emplace_back();
      }
      fetches_of[at->second].push_back(&f);
    }
    call.devices = devices;
    call.times.resize(devices.size());
    call.spans.resize(devices.size());
    auto& runtime = *runtime_;
    // A transfer span on device `k`'s timeline, where the simulation keeps timelines.
    auto add_span = [&runtime, &call](std::size_t k, const char* name, Seconds start, Seconds end) {
      if (runtime.timelines()) call.spans[k].push_back({SpanKind::transfer, name, start, end});
    };
    // Each device, in an actor of its own, waits for any put's copy still on its way to it, then sends all
    // its fetches to its host CPU as one transfer (host_transfer.hpp says why) and books its transfer from
    // the start until they are on the host.
    for (std::size_t k = 0; k < devices.size(); ++k) {
      auto* device_host = runtime.hosts().device(devices[k]);
      simgrid::s4u::Actor::create(
          "device_get", device_host, [&runtime, &fetches_of, &call, &devices, &add_span, k] {
            const Seconds start = simgrid::s4u::Engine::get_clock();
            Bytes bytes = 0;
            for (const Fetch* f : fetches_of[k]) {
              if (f->arrival != nullptr) f->arrival->wait_arrival();
              bytes += static_cast<Bytes>(f->shard.nbytes());
            }
            const Seconds arrived = simgrid::s4u::Engine::get_clock();
            if (arrived > start) add_span(k, "host->device", start, arrived);
            const auto& hosts = runtime.hosts();
            detail::HostTransfer transfer(runtime.transfer_mailboxes(), hosts.device(devices[k]),
                                          hosts.host_cpu(devices[k]), bytes);
            transfer.wait();
            call.times[k].transfer += transfer.finish_time() - start;
            add_span(k, "device->host", arrived, transfer.finish_time());
          });
    }
    runtime.run();
    call.end = now();
    for (auto& times : call.times) times.idle = (call.end - call.start) - times.transfer;
    runtime.add_call(std::move(call));
  }
  return tree.map([](const Array& leaf) { return leaf.residency() ? leaf.with_residency(nullptr) : leaf; });
}

}  // namespace spmdsim
