#include "runtime.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include "spmdsim/errors.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(spmdsim_runtime, "spmdsim: engine, platform and network endpoints");

namespace spmdsim::detail {
namespace {

// SimGrid has one engine per process; a second Simulation would share its clock.
bool engine_taken = false;
// The Runtime of the process's engine, for SimGrid's actor-termination callback (connected once per process).
Runtime* current_runtime = nullptr;

std::string endpoint_name(int device) { return fmt::format("d{}", device); }

// The network model's latency factor (1 under CM02, 13.01 under LV08).
double latency_factor() { return simgrid::config::get_value<double>("network/latency-factor"); }

#ifdef SPMDSIM_SANITIZED
// Under AddressSanitizer (-DSPMDSIM_SANITIZE), actors run on threads: ASan does not see the stack switches of
// SimGrid's default raw contexts (Debian's libsimgrid has no sanitizer annotations) and reports false stack
// errors on them, while a thread's stack is one it knows. The engine picks its contexts when it is made, so
// the setting goes in argv, first: a --cfg=contexts/factory on the command line still wins.
std::unique_ptr<simgrid::s4u::Engine> make_engine(int* argc, char** argv) {
  static char thread_contexts[] = "--cfg=contexts/factory:thread";
  std::vector<char*> args(argv, argv + *argc);
  args.insert(args.begin() + 1, thread_contexts);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  auto engine = std::make_unique<simgrid::s4u::Engine>(&count, args.data());
  // The caller's arguments that SimGrid left (it takes out the --cfg of a process's first engine only).
  args.resize(static_cast<std::size_t>(count));
  std::erase(args, thread_contexts);
  std::copy(args.begin(), args.end(), argv);
  argv[args.size()] = nullptr;
  *argc = static_cast<int>(args.size());
  return engine;
}
#else
std::unique_ptr<simgrid::s4u::Engine> make_engine(int* argc, char** argv) {
  return std::make_unique<simgrid::s4u::Engine>(argc, argv);
}
#endif

}  // namespace

Runtime::Runtime(int* argc, char** argv, const PlatformBuilder& builder, SimulationOptions options)
    : config_(std::move(options.simgrid_config)) {
  if (engine_taken)
    throw std::logic_error(
        "one Simulation per process: SimGrid's engine and clock are per process (run each simulation in its "
        "own process)");
  engine_taken = true;
  engine_ = make_engine(argc, argv);
  current_runtime = this;
  static const bool termination_watched = [] {
    simgrid::s4u::Actor::on_termination_cb([](const simgrid::s4u::Actor& actor) {
      if (current_runtime != nullptr) current_runtime->actor_ended(actor.get_pid());
    });
    return true;
  }();
  (void)termination_watched;
  for (const auto& setting : config_) simgrid::s4u::Engine::set_config(setting);
  platform_ = builder();
  if (platform_.devices.empty()) throw ValueError("the platform has no devices");
  if (platform_.host_cpu == nullptr) throw ValueError("the platform has no host CPU");
  engine_->get_netzone_root()->seal();
  for (auto& device : platform_.devices) {
    if (device.host_cpu == nullptr) device.host_cpu = platform_.host_cpu;
    device.spec.validate();
    ledgers_.push_back(std::make_shared<MemoryLedger>(device.name, device.spec.memory_capacity));
  }
  for (auto kind : kAllCollectiveKinds) {
    auto it = options.algorithms.find(kind);
    std::string name = it != options.algorithms.end() ? it->second : std::string(default_algorithm(kind));
    if (name != "auto") check_algorithm(kind, name);
    algorithms_[kind] = std::move(name);
  }
  if (options.pipeline_chunks < 1)
    throw ValueError(fmt::format("pipeline_chunks must be at least 1 (got {})", options.pipeline_chunks));
  pipeline_chunks_ = options.pipeline_chunks;
  if (!options.dimension_algorithms.empty()) {
    const std::vector<int> dimensions =
        platform_.dimensions.empty() ? std::vector<int>{num_devices()} : platform_.dimensions;
    check_dimension_algorithms(options.dimension_algorithms, dimensions);
  }
  dimension_algorithms_ = std::move(options.dimension_algorithms);
  aggregate_ring_phases_ = options.aggregate_ring_phases;
  XBT_DEBUG("platform '%s' with %zu devices", platform_.description.c_str(), platform_.devices.size());
}

Runtime::~Runtime() {
  // Copies nobody waited for finish now, so that no actor outlives the engine (SimGrid warns at exit).
  if (host_copies_.busy()) engine_->run();
  current_runtime = nullptr;
  engine_taken = false;
}

void Runtime::check_devices(const std::vector<int>& devices, std::string_view what) const {
  for (int d : devices)
    if (d < 0 || d >= num_devices())
      throw ValueError(
          fmt::format("{}: no device {} on this platform (devices 0..{})", what, d, num_devices() - 1));
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
    throw ValueError(fmt::format("{}: each device may appear once, got [{}]", what, fmt::join(devices, ", ")));
}

simgrid::s4u::Mailbox* Runtime::channel(int from, int to, Track track) {
  const auto key = std::make_tuple(from, to, track);
  auto it = channels_.find(key);
  if (it == channels_.end()) {
    const std::string suffix = track == Track::program ? "" : "/stream";
    it = channels_
             .emplace(key,
                      simgrid::s4u::Mailbox::by_name(endpoint_name(from) + ">" + endpoint_name(to) + suffix))
             .first;
  }
  return it->second;
}

Seconds Runtime::message_latency(int from, int to) {
  const auto key = std::make_pair(from, to);
  auto it = message_latencies_.find(key);
  if (it == message_latencies_.end()) {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    platform_.devices.at(static_cast<std::size_t>(from)).host->route_to(
        platform_.devices.at(static_cast<std::size_t>(to)).host, links, &latency);
    it = message_latencies_.emplace(key, latency * latency_factor()).first;
  }
  return it->second;
}

void Runtime::run() {
  failure_ = nullptr;
  if (host_copies_.busy())
    run_beside_host_copies();
  else
    engine_->run();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

// SimGrid's run() returns only once nothing is left to simulate, but a call must end when its own actors do,
// with the host's copies still in flight, so that the host's next call starts then. SimGrid 3.32 cannot
// pause a transfer exactly (resuming one still in its latency phase gives it bandwidth early), so the run
// stops the engine instead. EngineImpl::run returns after the step in which the set of vetoed activities it
// tracks (read when the run starts) becomes non-empty: once only copying actors are left, a marker goes into
// that set and a timer due now keeps that step from advancing the clock. The copying actors and their
// transfers carry on in the next run. run_until() rather than run(): with actors left, run() takes a vetoed
// activity for an error. Its far deadline is only reached when the call's actors deadlock.
void Runtime::run_beside_host_copies() {
  constexpr double kNoDeadline = std::numeric_limits<double>::max() / 4;
  copies_running_beside_ = true;
  paused_ = false;
  engine_->track_vetoed_activities(&pause_set_);
  engine_->run_until(kNoDeadline);
  engine_->track_vetoed_activities(nullptr);
  pause_set_.clear();
  copies_running_beside_ = false;
  if (!paused_ && !failure_)
    throw std::logic_error("the devices' actors deadlocked while host copies were in flight");
}

void Runtime::actor_ended(aid_t actor) {
  host_copies_.forget(actor);
  if (copies_running_beside_ && !paused_ &&
      simgrid::s4u::Engine::get_instance()->get_actor_count() == host_copies_.copier_count())
    pause_when_only_copies_left();
}

void Runtime::pause_when_only_copies_left() {
  paused_ = true;
  if (!pause_marker_) pause_marker_ = simgrid::s4u::Exec::init();
  pause_set_.insert(pause_marker_.get());
  simgrid::kernel::timer::Timer::set(simgrid::s4u::Engine::get_clock(), [] {});
}

void Runtime::fail(std::exception_ptr error) {
  if (!failure_) failure_ = std::move(error);
  // The others stop, so that none waits forever; the host's copies wait for nobody and carry on.
  if (!host_copies_.busy()) {
    simgrid::s4u::Actor::kill_all();
    return;
  }
  const auto self = simgrid::s4u::this_actor::get_pid();
  for (const auto& actor : engine_->get_all_actors())
    if (actor->get_pid() != self && !host_copies_.is_copier(actor->get_pid())) actor->kill();
}

void Runtime::add_call(CallReport call) { calls_.push_back(std::move(call)); }

SimulationReport Runtime::report() const {
  SimulationReport report;
  report.platform = platform_.description;
  report.config = config_;
  for (const auto& [kind, name] : algorithms_) report.algorithms[std::string(collective_kind_name(kind))] = name;
  report.simulated_time = simgrid::s4u::Engine::get_clock();
  report.calls = calls_;
  report.device_totals.resize(platform_.devices.size());
  for (const auto& call : calls_)
    for (std::size_t i = 0; i < call.devices.size(); ++i)
      report.device_totals[static_cast<std::size_t>(call.devices[i])] += call.times[i];
  for (std::size_t d = 0; d < platform_.devices.size(); ++d) {
    report.device_names.push_back(platform_.devices[d].name);
    const auto& ledger = *ledgers_[d];
    report.memory.push_back({ledger.device_name(), ledger.capacity(), ledger.peak(), ledger.at_peak()});
    report.memory_timelines.push_back(ledger.timeline());
  }
  return report;
}

}  // namespace spmdsim::detail
