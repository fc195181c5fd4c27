#include "spmdsim/simulation.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

#include "engine/direct_transfer.hpp"
#include "engine/host_copies.hpp"
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
    // Sends the fetches of the devices `ks` (indices into `devices`) to their host CPUs at once, from the
    // calling actor, one transfer of all its fetches' bytes per device (direct_transfer.hpp says why), and
    // books each device's transfer from `start` until its fetches are on the host.
    auto send_to_host = [&runtime, &fetches_of, &call, &devices, &add_span](
                            const std::vector<std::size_t>& ks, Seconds start, Seconds arrived) {
      std::vector<simgrid::s4u::CommPtr> sends;
      const auto& hosts = runtime.hosts();
      for (std::size_t k : ks) {
        Bytes bytes = 0;
        for (const Fetch* f : fetches_of[k]) bytes += static_cast<Bytes>(f->shard.nbytes());
        sends.push_back(
            detail::start_direct_transfer(hosts.device(devices[k]), hosts.host_cpu(devices[k]), bytes));
      }
      simgrid::s4u::Comm::wait_all(sends);
      for (std::size_t i = 0; i < ks.size(); ++i) {
        const Seconds end = sends[i]->get_finish_time();
        call.times[ks[i]].transfer += end - start;
        add_span(ks[i], "device->host", arrived, end);
      }
    };
    // Devices holding all their shards send from one actor; one still receiving a put's copy waits for it in
    // an actor of its own first.
    std::vector<std::size_t> ready;
    for (std::size_t k = 0; k < devices.size(); ++k) {
      const auto& mine = fetches_of[k];
      const bool waits = std::any_of(mine.begin(), mine.end(), [](const Fetch* f) {
        return f->arrival != nullptr && !f->arrival->arrived();
      });
      if (!waits) {
        ready.push_back(k);
        continue;
      }
      auto* host = runtime.hosts().device(devices[k]);
      simgrid::s4u::Actor::create("device_get", host, [&mine, &send_to_host, &add_span, k] {
        const Seconds start = simgrid::s4u::Engine::get_clock();
        for (const Fetch* f : mine)
          if (f->arrival != nullptr) f->arrival->wait_arrival();
        const Seconds arrived = simgrid::s4u::Engine::get_clock();
        if (arrived > start) add_span(k, "host->device", start, arrived);
        send_to_host({k}, start, arrived);
      });
    }
    if (!ready.empty()) {
      auto* host_cpu = runtime.hosts().host_cpu(devices[ready.front()]);
      simgrid::s4u::Actor::create("device_get", host_cpu, [&send_to_host, ready] {
        const Seconds start = simgrid::s4u::Engine::get_clock();
        send_to_host(ready, start, start);
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
