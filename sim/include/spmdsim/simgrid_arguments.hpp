// SimGrid's own command-line settings, checked before SimGrid sees them. SimGrid 3.32 aborts the process
// with a backtrace on many mistakes (an unknown model name, a --cfg without a value, a --log it cannot parse,
// an unknown context factory) and silently accepts others that make every time 0 or NaN (a bandwidth factor
// of 0 or NaN, a negative latency factor), so spmdsim refuses them with the setting named and what is
// allowed. The lists of values are SimGrid 3.32's own (src/surf/surf_interface.cpp,
// src/kernel/EngineImpl.cpp, src/simgrid/sg_config.cpp, src/xbt/log.cpp); docs/simgrid_settings.md has the
// table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim {

// Checks one argument SimGrid would take from argv: "--cfg=KEY:VALUE[ KEY:VALUE...]" or
// "--log=CATEGORY.SETTING:VALUE[ ...]"; any other argument is left alone. Throws ValueError naming the
// argument, what is wrong and what is allowed: a --cfg key spmdsim does not pass to SimGrid (the message
// lists those it does), a value of the wrong type, out of range or not among SimGrid's names; a --log
// setting SimGrid cannot parse (a category that is not an identifier, an unknown setting, priority,
// appender or layout directive).
void check_simgrid_argument(std::string_view argument);

// The same for one --cfg setting given without "--cfg=" ("network/model:CM02"), as SimulationOptions takes.
void check_simgrid_setting(std::string_view setting);

// How SimGrid runs each actor under these arguments (the last --cfg of a key wins, as in SimGrid): its
// context factory, the stack it allocates per actor (contexts/stack-size, 8 MiB by default; a thread's own
// stack under the thread factory, which is 8 MiB by default too) and the guard pages below it
// (contexts/guard-size, one page by default).
struct ActorContexts {
  std::string factory;
  std::int64_t stack_bytes = 0;
  std::int64_t guard_bytes = 0;
  // Memory maps each actor adds: its stack and the protected guard pages below it (a thread's stack has a
  // guard page of its own). A stack without guard pages is plain malloc'd memory, which the kernel merges
  // with the maps beside it: 131,072 actors without guard pages ran within the default vm.max_map_count of
  // 65,530 (docs/performance.md).
  int maps_per_actor() const { return guard_bytes > 0 || factory == "thread" ? 2 : 0; }
};
ActorContexts actor_contexts(const std::vector<std::string>& arguments);

}  // namespace spmdsim
