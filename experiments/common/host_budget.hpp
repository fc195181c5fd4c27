// The host memory a run is about to take, estimated before it starts, against what the host allows: its
// real arrays and SimGrid's actors (each a stack of contexts/stack-size plus guard pages: address space,
// one or two memory maps, a few pages touched) against MemAvailable, RLIMIT_AS (`ulimit -v`) and
// vm.max_map_count. A run past any of them would end in std::bad_alloc, SimGrid's "Failed to allocate
// stack" or "Failed to protect stack"; the commands refuse it instead, naming what fits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/simgrid_arguments.hpp"

namespace spmdsim::cli {

// What the host allows, as read when a command starts. Tests build their own.
struct HostLimits {
  std::optional<double> mem_available;        // bytes; MemAvailable of /proc/meminfo, none when unreadable
  std::optional<double> address_space;        // bytes; RLIMIT_AS's soft limit, none when unlimited
  double address_space_used = 0;              // bytes this process maps already (VmSize)
  std::optional<std::int64_t> max_map_count;  // vm.max_map_count
  std::int64_t maps_used = 0;                 // the memory maps this process has already
};

// Where read_host_limits reads: the machine's files unless a test names others.
struct HostFiles {
  std::filesystem::path meminfo = "/proc/meminfo";
  std::filesystem::path status = "/proc/self/status";
  std::filesystem::path max_map_count = "/proc/sys/vm/max_map_count";
  std::filesystem::path maps = "/proc/self/maps";
};

// The limits of this process now (RLIMIT_AS from getrlimit).
HostLimits read_host_limits(const HostFiles& files = {});

// What a run holds at its peak.
struct HostDemand {
  double data_bytes = 0;    // real arrays (host and devices: a device buffer is host memory)
  std::int64_t actors = 0;  // SimGrid actors alive at once
  bool abstract = false;    // the actors compute on shapes only (Array::abstract): their stacks stay shallow
};

// Pages an actor touches on its stack and in SimGrid's bookkeeping, counted against MemAvailable: the
// demo at 256 devices peaks at 337 MB resident, about 1.2 MiB per device with its two actors.
inline constexpr double kResidentBytesPerActor = 512 * 1024;
// The same for an actor of an abstract run: a psum over 131,072 devices on shapes only peaks at 3.2 GB
// resident, about 24 KiB per device (docs/performance.md).
inline constexpr double kResidentBytesPerAbstractActor = 32 * 1024;

struct HostEstimate {
  double resident_bytes = 0;  // data + actors x kResidentBytesPerActor (or PerAbstractActor)
  double address_bytes = 0;   // data + actors x (stack + guard)
  std::int64_t maps = 0;      // actors x maps per actor
};
HostEstimate estimate_host_use(const HostDemand& demand, const ActorContexts& contexts);

// Nothing when `demand` fits; otherwise why not, with the estimate: "needs about 9.1 GiB of address space
// (1024 actors' 8 MiB stacks and 0.0 GiB of data) but RLIMIT_AS (ulimit -v) leaves 7.2 GiB".
std::optional<std::string> host_shortfall(const HostDemand& demand, const ActorContexts& contexts,
                                          const HostLimits& limits);

// The largest value in [least, most] whose demand fits, the demand growing with the value; none if even
// `least` does not fit.
std::optional<std::int64_t> largest_fitting(std::int64_t least, std::int64_t most,
                                            const std::function<HostDemand(std::int64_t)>& demand,
                                            const ActorContexts& contexts, const HostLimits& limits);

// Throws UsageError "WHAT: it needs about ... but ...; OPTION N fits" when the demand at `value` does not
// fit, N the largest multiple of `step` from `least` up that does (or "nothing fits, not even OPTION
// LEAST").
void check_fits(const std::string& what, std::string_view option, std::int64_t value, std::int64_t least,
                const std::function<HostDemand(std::int64_t)>& demand, const ActorContexts& contexts,
                const HostLimits& limits, std::int64_t step = 1);

// SimGrid's guard pages split each actor's stack into two memory maps. When `actors` would run out of
// vm.max_map_count with them and `simgrid_argv` leaves contexts/guard-size alone, appends
// "--cfg=contexts/guard-size:0" (one map per stack; an overflowing stack is then no longer stopped by a
// guard page, and spmdsim's actors use a few KiB of theirs). Returns the contexts in force.
ActorContexts fit_actor_contexts(std::vector<std::string>& simgrid_argv, std::int64_t actors,
                                 const HostLimits& limits);

// How many runs of `demand` fit side by side in MemAvailable (each child its own address space and maps),
// at least 1.
int runs_side_by_side(const HostDemand& demand, const ActorContexts& contexts, const HostLimits& limits);

// How many runs of `each` to run side by side: `asked` (--jobs), or the machine's cores when 0, and no more
// than fit in MemAvailable together (runs_side_by_side).
int parallel_runs(int asked, const HostDemand& each, const ActorContexts& contexts, const HostLimits& limits);

// "9.1 GiB"
std::string gib_text(double bytes);

}  // namespace spmdsim::cli
