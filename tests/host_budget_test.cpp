// The host memory estimate (experiments/common/host_budget.*) against limits the tests choose: MemAvailable,
// RLIMIT_AS and vm.max_map_count given, not read from the machine.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/command_line.hpp"
#include "common/host_budget.hpp"
#include "scratch_dir.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/simgrid_arguments.hpp"

namespace spmdsim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// SimGrid's defaults: 8 MiB stacks and one 4 KiB guard page (two maps per actor).
ActorContexts default_contexts() {
  return {.factory = "raw", .stack_bytes = 8 << 20, .guard_bytes = 4096};
}

TEST(HostBudget, EstimateCountsDataStacksAndMaps) {
  const HostEstimate use = estimate_host_use({.data_bytes = 1e9, .actors = 10}, default_contexts());
  EXPECT_DOUBLE_EQ(use.resident_bytes, 1e9 + 10 * kResidentBytesPerActor);
  EXPECT_DOUBLE_EQ(use.address_bytes, 1e9 + 10 * (8.0 * (1 << 20) + 4096));
  EXPECT_EQ(use.maps, 20);
  ActorContexts no_guard = default_contexts();
  no_guard.guard_bytes = 0;
  EXPECT_EQ(estimate_host_use({.actors = 10}, no_guard).maps, 0);
  EXPECT_DOUBLE_EQ(estimate_host_use({.actors = 10, .abstract = true}, no_guard).resident_bytes,
                   10 * kResidentBytesPerAbstractActor);
}

TEST(HostBudget, EachLimitIsNamedWhenItIsPassed) {
  const ActorContexts contexts = default_contexts();
  EXPECT_FALSE(host_shortfall({.data_bytes = 1e9, .actors = 10}, contexts, {}));  // nothing known: fits

  const auto memory = host_shortfall({.data_bytes = 3 * kGiB}, contexts, {.mem_available = 2 * kGiB});
  ASSERT_TRUE(memory);
  EXPECT_EQ(*memory,
            "it needs about 3.0 GiB of memory (3.0 GiB of data and 0 actors with 8196 KiB stacks) but "
            "MemAvailable is 2.0 GiB");

  const HostLimits ulimit{.address_space = 8 * kGiB, .address_space_used = 1 * kGiB};
  EXPECT_FALSE(host_shortfall({.actors = 800}, contexts, ulimit));  // 6.3 GiB of stacks
  const auto address = host_shortfall({.actors = 1024}, contexts, ulimit);
  ASSERT_TRUE(address);
  EXPECT_EQ(
      *address,
      "it needs about 8.0 GiB of address space (0.0 GiB of data and 1024 actors with 8196 KiB stacks) but "
      "RLIMIT_AS (ulimit -v) leaves 7.0 GiB");

  const auto maps = host_shortfall({.actors = 32768}, contexts, {.max_map_count = 65530, .maps_used = 100});
  ASSERT_TRUE(maps);
  EXPECT_EQ(*maps,
            "its 32768 actors need 65536 memory maps (stack and guard pages, contexts/guard-size) but "
            "vm.max_map_count leaves 65430");
}

TEST(HostBudget, TheLargestFittingValueIsFoundAndNamed) {
  const ActorContexts contexts = default_contexts();
  const HostLimits limits{.address_space = 1 * kGiB};
  const auto demand = [](std::int64_t devices) { return HostDemand{.actors = devices}; };
  // 1 GiB / (8 MiB + 4 KiB) = 127.9 stacks.
  EXPECT_EQ(largest_fitting(1, 1024, demand, contexts, limits), 127);
  EXPECT_EQ(largest_fitting(200, 1024, demand, contexts, limits), std::nullopt);
  try {
    check_fits("--devices 1024", "--devices", 1024, 2, demand, contexts, limits);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--devices 1024: it needs about 8.0 GiB of address space (0.0 GiB of data and 1024 actors with "
              "8196 KiB stacks) but RLIMIT_AS (ulimit -v) leaves 1.0 GiB; --devices 127 fits");
  }
  // Only multiples of the step are offered.
  try {
    check_fits("--batch 1000", "--batch", 1000, 1, demand, contexts, limits, 8);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_TRUE(std::string(e.what()).ends_with("; --batch 120 fits")) << e.what();
  }
  EXPECT_NO_THROW(check_fits("--devices 8", "--devices", 8, 2, demand, contexts, limits));
}

TEST(HostBudget, ParallelRunsAreBoundedByMemAvailable) {
  const ActorContexts contexts = default_contexts();
  const HostDemand each{.data_bytes = 3 * kGiB};
  EXPECT_EQ(parallel_runs(8, each, contexts, {.mem_available = 10 * kGiB}), 3);
  EXPECT_EQ(parallel_runs(2, each, contexts, {.mem_available = 10 * kGiB}), 2);
  EXPECT_EQ(parallel_runs(8, each, contexts, {.mem_available = 1 * kGiB}), 1);
  EXPECT_GE(parallel_runs(0, {}, contexts, {}), 1);  // the cores
}

TEST(HostBudget, LimitsAreReadFromTheFilesNamed) {
  testing::ScratchDir dir;
  const HostFiles files{.meminfo = dir.write("meminfo", "MemTotal: 100 kB\nMemAvailable:   2048 kB\n"),
                        .status = dir.write("status", "Name: x\nVmSize:\t  1024 kB\n"),
                        .max_map_count = dir.write("max_map_count", "65530\n"),
                        .maps = dir.write("maps", "a\nb\nc\n")};
  const HostLimits limits = read_host_limits(files);
  EXPECT_EQ(limits.mem_available, 2048.0 * 1024);
  EXPECT_EQ(limits.address_space_used, 1024.0 * 1024);
  EXPECT_EQ(limits.max_map_count, 65530);
  EXPECT_EQ(limits.maps_used, 3);
  const HostLimits unreadable =
      read_host_limits({.meminfo = dir.path() / "none", .max_map_count = dir.path() / "none"});
  EXPECT_FALSE(unreadable.mem_available);
  EXPECT_FALSE(unreadable.max_map_count);
}

TEST(HostBudget, ActorContextsFollowTheLastSetting) {
  const ActorContexts defaults = actor_contexts({});
  EXPECT_EQ(defaults.factory, "raw");
  EXPECT_EQ(defaults.stack_bytes, 8192 * 1024);
  EXPECT_GT(defaults.guard_bytes, 0);
  const ActorContexts set = actor_contexts({"--cfg=contexts/stack-size:512", "--log=spmdsim.thres:debug",
                                            "--cfg=contexts/guard-size:0,contexts/stack-size:1024"});
  EXPECT_EQ(set.stack_bytes, 1024 * 1024);
  EXPECT_EQ(set.guard_bytes, 0);
  EXPECT_EQ(set.maps_per_actor(), 0);
}

TEST(HostBudget, GuardPagesGoWhenTheMemoryMapsWouldRunOut) {
  const HostLimits limits{.max_map_count = 65530, .maps_used = 100};
  std::vector<std::string> argv{"spmdsim"};
  EXPECT_GT(fit_actor_contexts(argv, 30000, limits).guard_bytes, 0);  // 60,000 maps fit
  EXPECT_EQ(argv, std::vector<std::string>{"spmdsim"});
  const ActorContexts fitted = fit_actor_contexts(argv, 196609, limits);  // 131,072 devices' actors
  EXPECT_EQ(fitted.guard_bytes, 0);
  EXPECT_EQ(argv, (std::vector<std::string>{"spmdsim", "--cfg=contexts/guard-size:0"}));
  // A guard size the user chose stays, and the estimate then refuses the run (host_shortfall).
  std::vector<std::string> chosen{"spmdsim", "--cfg=contexts/guard-size:2"};
  EXPECT_GT(fit_actor_contexts(chosen, 196609, limits).guard_bytes, 0);
  EXPECT_EQ(chosen.size(), 2u);
}

TEST(SimgridArguments, SettingsOfSimulationOptionsAreCheckedToo) {
  EXPECT_NO_THROW(check_simgrid_setting("network/model:CM02"));
  EXPECT_THROW(check_simgrid_setting("network/model:FOO"), ValueError);
  EXPECT_NO_THROW(check_simgrid_argument("--log=no_loc"));
  EXPECT_NO_THROW(check_simgrid_argument("--log=xbt_cfg.thres:warning spmdsim.fmt:%m%n"));
  EXPECT_NO_THROW(check_simgrid_argument("not-a-simgrid-argument"));
}

}  // namespace
}  // namespace spmdsim::cli
