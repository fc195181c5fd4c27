// The log categories (docs/architecture.md): turned on at run time, their debug lines follow one psum from
// the pmap call through the collective, its algorithm, its messages and its reduction to the call's end, each
// line with the simulated time. gtest runs each test in its own process, so each sets XBT's thresholds anew.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// The standard error of a psum over 2 devices, run with `log_setting` on the command line.
std::string psum_log(const char* log_setting) {
  char program[] = "logging_test";
  std::string setting = log_setting;
  std::vector<char*> argv{program, setting.data(), nullptr};
  int argc = 2;
  ::testing::internal::CaptureStderr();
  {
    Simulation sim(&argc, argv.data(), topologies::switch_cluster(testing::round_numbers_cluster(2)),
                   {.simgrid_config = alpha_beta_config()});
    auto total = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
    total(sim, {Array::from_values({2, 3}, {1, 2, 3, 10, 20, 30})});
  }
  return ::testing::internal::GetCapturedStderr();
}

// Each of `trail` in `log`, in this order.
void expect_in_order(const std::string& log, const std::vector<std::string>& trail) {
  std::size_t at = 0;
  for (const auto& line : trail) {
    const std::size_t found = log.find(line, at);
    ASSERT_NE(found, std::string::npos) << "not found after offset " << at << ": " << line << "\nlog:\n"
                                        << log;
    at = found + line.size();
  }
}

TEST(Logging, FollowsOnePsumFromTheCallToItsEnd) {
  const std::string log = psum_log("--log=spmdsim.thres:debug");
  expect_in_order(log,
                  {
                      "[spmdsim_pmap/VERBOSE] pmap on 2 devices",
                      "[spmdsim_transfer/VERBOSE] host -> dev0: 12 bytes posted",
                      "[spmdsim_transfer/VERBOSE] device 0: 1 input transfer(s) arrived",
                      "[spmdsim_pmap/VERBOSE] device 0: pmap's program starts",
                      "[spmdsim_coll/VERBOSE] psum on device 0: 2 ranks, 12 bytes, algorithm 'ring' (the "
                      "simulation's)",
                      "[spmdsim_coll_comm/VERBOSE] psum: device 0 sends",
                      "[spmdsim_coll_comm/VERBOSE] psum: device 0 received",
                      "[spmdsim_coll_comm/VERBOSE] psum: device 0 reduces",
                      "[spmdsim_coll/VERBOSE] psum on device 0 ends",
                      "[spmdsim_pmap/VERBOSE] device 0: pmap's program ends",
                      "[spmdsim_pmap/VERBOSE] pmap ends",
                  });
  // XBT's default layout: the actor and the simulated time before the category (the input arrives at 1 us,
  // the psum's kernel launches in 1 us, then 2 us per message).
  EXPECT_NE(log.find("[dev0:pmap:0:(1) 0.000006] "), std::string::npos) << log;
}

TEST(Logging, OneSubsystemAndTheCategoriesBelowIt) {
  const std::string log = psum_log("--log=spmdsim_coll.thres:debug");
  expect_in_order(
      log, {"[spmdsim_coll/VERBOSE] psum on device 0", "[spmdsim_coll_comm/VERBOSE] psum: device 0 sends",
            "[spmdsim_coll/VERBOSE] psum on device 0 ends"});
  EXPECT_EQ(log.find("[spmdsim_pmap/"), std::string::npos) << log;
  EXPECT_EQ(log.find("[spmdsim_transfer/"), std::string::npos) << log;
}

TEST(Logging, OffByDefault) {
  EXPECT_EQ(psum_log("--log=root.thres:info").find("spmdsim"), std::string::npos);
}

}  // namespace
}  // namespace spmdsim
