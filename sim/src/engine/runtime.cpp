#include "engine/runtime.hpp"

#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xbt/log.h>

#include "spmdsim/errors.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_engine);

namespace spmdsim::detail {

Runtime::Runtime(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options)
    : engine_(
          argc, argv, builder.network_config(), options.simgrid_config,
          [this](const simgrid::s4u::Actor& actor) { host_copies_.actor_started(actor); },
          [this](aid_t actor) { actor_ended(actor); }),
      config_(engine_.applied()) {
  platform_ = builder();
  if (platform_.devices.empty()) throw ValueError("the platform has no devices");
  if (platform_.host_cpu.empty()) throw ValueError("the platform has no host CPU");
  engine_.engine().get_netzone_root()->seal();
  for (auto& device : platform_.devices) {
    if (device.host_cpu.empty()) device.host_cpu = platform_.host_cpu;
    device.spec.validate();
    ledgers_.push_back(
        std::make_shared<MemoryLedger>(device.name, device.spec.memory_capacity, options.timelines));
  }
  hosts_ = PlatformHosts(platform_);
  fusion_ = options.fusion;
  timelines_ = options.timelines;
  collectives_ = CollectiveSettings(
      options, platform_.dimensions.empty() ? std::vector<int>{num_devices()} : platform_.dimensions,
      collective_library(platform_));
  enable_x64_ = options.enable_x64;
  XBT_VERB("platform '%s' with %zu devices", platform_.description.c_str(), platform_.devices.size());
}

Runtime::~Runtime() {
  // Copies nobody waited for finish now, so that no actor outlives the engine (SimGrid warns at exit).
  if (host_copies_.busy()) engine_.engine().run();
}

void Runtime::check_devices(const std::vector<int>& devices, std::string_view what) const {
  for (int d : devices)
    if (d < 0 || d >= num_devices())
      throw ValueError(
          fmt::format("{}: no device {} on this platform (devices 0..{})", what, d, num_devices() - 1));
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
    throw ValueError(
        fmt::format("{}: each device may appear once, got [{}]", what, fmt::join(devices, ", ")));
}

void Runtime::run() {
  failures_.clear();
  XBT_VERB("run starts with %zu actors%s", engine_.engine().get_actor_count(),
           host_copies_.busy() ? ", host copies in flight" : "");
  if (!host_copies_.busy())
    engine_.engine().run();
  else if (!copy_pause_.run() && !failures_.any())
    throw std::logic_error("the devices' actors deadlocked while host copies were in flight");
  XBT_VERB("run ends%s", failures_.any() ? " after a failure" : "");
  failures_.rethrow_first();
}

void Runtime::actor_ended(aid_t actor) {
  host_copies_.forget(actor);
  copy_pause_.actor_ended();
}

}  // namespace spmdsim::detail
