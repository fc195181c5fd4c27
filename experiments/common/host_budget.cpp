#include "common/host_budget.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "common/command_line.hpp"

namespace spmdsim::cli {
namespace {

// The value of `key` ("MemAvailable:") in a /proc file of "key value kB" lines, in bytes.
std::optional<double> kib_field(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string word; in >> word;) {
    double kib = 0;
    if (word == key && in >> kib) return kib * 1024;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

std::int64_t line_count(const std::filesystem::path& file) {
  std::ifstream in(file);
  return static_cast<std::int64_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace

HostLimits read_host_limits(const HostFiles& files) {
  HostLimits limits;
  limits.mem_available = kib_field(files.meminfo, "MemAvailable:");
  rlimit address_space{};
  if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY)
    limits.address_space = static_cast<double>(address_space.rlim_cur);
  limits.address_space_used = kib_field(files.status, "VmSize:").value_or(0);
  std::ifstream max_maps(files.max_map_count);
  std::int64_t count = 0;
  if (max_maps >> count) limits.max_map_count = count;
  limits.maps_used = line_count(files.maps);
  return limits;
}

HostEstimate estimate_host_use(const HostDemand& demand, const ActorContexts& contexts) {
  const auto actors = static_cast<double>(demand.actors);
  const double resident_per_actor = demand.abstract ? kResidentBytesPerAbstractActor : kResidentBytesPerActor;
  return {.resident_bytes = demand.data_bytes + actors * resident_per_actor,
          .address_bytes =
              demand.data_bytes + actors * static_cast<double>(contexts.stack_bytes + contexts.guard_bytes),
          .maps = demand.actors * contexts.maps_per_actor()};
}

std::string gib_text(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1ull << 30));
}

std::optional<std::string> host_shortfall(const HostDemand& demand, const ActorContexts& contexts,
                                          const HostLimits& limits) {
  const HostEstimate use = estimate_host_use(demand, contexts);
  const std::string parts =
      fmt::format("{} of data and {} actors with {} KiB stacks", gib_text(demand.data_bytes), demand.actors,
                  (contexts.stack_bytes + contexts.guard_bytes) / 1024);
  if (limits.mem_available && use.resident_bytes > *limits.mem_available)
    return fmt::format("it needs about {} of memory ({}) but MemAvailable is {}",
                       gib_text(use.resident_bytes), parts, gib_text(*limits.mem_available));
  if (limits.address_space && use.address_bytes > *limits.address_space - limits.address_space_used)
    return fmt::format("it needs about {} of address space ({}) but RLIMIT_AS (ulimit -v) leaves {}",
                       gib_text(use.address_bytes), parts,
                       gib_text(std::max(0.0, *limits.address_space - limits.address_space_used)));
  if (limits.max_map_count && use.maps > *limits.max_map_count - limits.maps_used)
    return fmt::format(
        "its {} actors need {} memory maps (stack and guard pages, contexts/guard-size) but "
        "vm.max_map_count leaves {}",
        demand.actors, use.maps, *limits.max_map_count - limits.maps_used);
  return std::nullopt;
}

std::optional<std::int64_t> largest_fitting(std::int64_t least, std::int64_t most,
                                            const std::function<HostDemand(std::int64_t)>& demand,
                                            const ActorContexts& contexts, const HostLimits& limits) {
  const auto fits = [&](std::int64_t value) { return !host_shortfall(demand(value), contexts, limits); };
  if (least > most || !fits(least)) return std::nullopt;
  while (least < most) {  // fits(least) holds
    const std::int64_t middle = least + (most - least + 1) / 2;
    if (fits(middle))
      least = middle;
    else
      most = middle - 1;
  }
  return least;
}

void check_fits(const std::string& what, std::string_view option, std::int64_t value, std::int64_t least,
                const std::function<HostDemand(std::int64_t)>& demand, const ActorContexts& contexts,
                const HostLimits& limits, std::int64_t step) {
  const auto shortfall = host_shortfall(demand(value), contexts, limits);
  if (!shortfall) return;
  const std::int64_t first = std::max<std::int64_t>(1, (least + step - 1) / step);
  const auto nearest = largest_fitting(
      first, (value - 1) / step, [&](std::int64_t k) { return demand(k * step); }, contexts, limits);
  throw UsageError(fmt::format("{}: {}; {}", what, *shortfall,
                               nearest ? fmt::format("{} {} fits", option, *nearest * step)
                                       : fmt::format("nothing fits, not even {} {}", option, first * step)));
}

ActorContexts fit_actor_contexts(std::vector<std::string>& simgrid_argv, std::int64_t actors,
                                 const HostLimits& limits) {
  ActorContexts contexts = actor_contexts(simgrid_argv);
  const bool guard_set = std::any_of(simgrid_argv.begin(), simgrid_argv.end(), [](const std::string& arg) {
    return arg.starts_with("--cfg=") && arg.find("contexts/guard-size") != std::string::npos;
  });
  const bool maps_short =
      limits.max_map_count && actors * contexts.maps_per_actor() > *limits.max_map_count - limits.maps_used;
  if (guard_set || !maps_short || contexts.guard_bytes == 0) return contexts;
  simgrid_argv.emplace_back("--cfg=contexts/guard-size:0");
  return actor_contexts(simgrid_argv);
}

int runs_side_by_side(const HostDemand& demand, const ActorContexts& contexts, const HostLimits& limits) {
  if (!limits.mem_available) return std::numeric_limits<int>::max();
  const double each = std::max(1.0, estimate_host_use(demand, contexts).resident_bytes);
  return static_cast<int>(std::clamp(*limits.mem_available / each, 1.0, 1e6));
}

int parallel_runs(int asked, const HostDemand& each, const ActorContexts& contexts,
                  const HostLimits& limits) {
  const int wanted = asked > 0 ? asked : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(wanted, runs_side_by_side(each, contexts, limits));
}

}  // namespace spmdsim::cli
