// Collective selection and the errors that are spmdsim's own (the JAX-worded ones are in the fixtures).
#include <gtest/gtest.h>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

TEST(Algorithms, UnknownNameListsTheValidOnes) {
  try {
    check_algorithm(CollectiveKind::all_reduce, "butterfly");
    FAIL();
  } catch (const ValueError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("unknown all_reduce algorithm 'butterfly'; valid: ring")) << message;
  }
}

TEST(Algorithms, ASimulationRefusesAnUnknownAlgorithm) {
  EXPECT_THROW(Simulation(topologies::switch_cluster(testing::round_numbers_cluster(2)),
                          {{}, {{CollectiveKind::all_to_all, "ring"}}}),
               ValueError);
}

TEST(Algorithms, EveryKindHasItsDefaultRegistered) {
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                    CollectiveKind::all_to_all})
    EXPECT_NO_THROW(check_algorithm(kind, default_algorithm(kind)));
}

TEST(Collectives, OutsidePmapTheAxisIsUnbound) {
  try {
    psum(Array::zeros({2}), "i");
    FAIL();
  } catch (const NameError& e) {
    EXPECT_STREQ(e.what(), "unbound axis name: i");
  }
}

TEST(Collectives, GroupsMustAllBeTheSameSize) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(3)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        return psum(a[0].array(), "i", {{0, 1}, {2}});
      },
      {.axis_name = "i"});
  EXPECT_THROW(f(sim, {Array::zeros({3, 2})}), ValueError);
}

TEST(Collectives, AFailureOnOneDeviceStopsTheCallAndReachesTheHost) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(4)));
  // Device 2 asks for a collective on a name pmap did not bind, the others wait in a psum: the error ends
  // the call instead of leaving them waiting forever.
  auto f = pmap(
      [](const Args& a) -> Tree {
        if (axis_index("i").item(0) == 2) return psum(a[0].array(), "j");
        return psum(a[0].array(), "i");
      },
      {.axis_name = "i"});
  EXPECT_THROW(f(sim, {Array::zeros({4, 2})}), NameError);
  // Nothing of the failed call is left in flight to disturb the next one.
  auto g = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
  Tree out = sim.device_get(g(sim, {Array::full({4, 2}, 1.0)}));
  EXPECT_EQ(out.leaf().to_doubles(), std::vector<double>(8, 4.0));
}

}  // namespace
}  // namespace spmdsim
