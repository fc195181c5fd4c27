// Collective selection and the errors that are spmdsim's own (the JAX-worded ones are in the fixtures).
#include <gtest/gtest.h>

#include <functional>
#include <map>

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

// A tree's collective is one call per dtype, each leaf's values as the per-leaf call gives them. The values
// are small integers, so every summation order gives the same floats.
Array counting(const Shape& shape, double offset, DType dtype = DType::f32) {
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = offset + static_cast<double>(i % 7);
  return Array::from_values(shape, values, dtype);
}

// Runs `on_tree` and `per_leaf` over the same tree of a mixed-dtype batch on 3 devices; checks the leaves
// agree and that the tree made one `name` call per dtype on every device.
void expect_tree_call_matches_leaves(const std::function<Tree(const Tree&)>& on_tree,
                                     const std::function<Array(const Array&)>& per_leaf, const char* name) {
  const int p = 3;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  const Tree batch = Tree::dict({{"w", counting({p, 6, 4}, 1)},
                                 {"b", counting({p, 6}, 2)},
                                 {"steps", counting({p, 3}, 3, DType::i32)}});
  auto f = pmap(
      [&](const Args& a) -> Tree {
        return Tree::tuple({on_tree(a[0].tree()), a[0].tree().map(per_leaf)});
      },
      {.axis_name = "i"});
  const Tree out = sim.device_get(f(sim, {batch}));
  const auto together = out[0].leaves();
  const auto apart = out[1].leaves();
  ASSERT_EQ(together.size(), apart.size());
  for (std::size_t i = 0; i < together.size(); ++i) {
    EXPECT_EQ(together[i].shape(), apart[i].shape()) << "leaf " << i;
    EXPECT_EQ(together[i].dtype(), apart[i].dtype()) << "leaf " << i;
    EXPECT_EQ(together[i].to_doubles(), apart[i].to_doubles()) << "leaf " << i;
  }
  const SimulationReport report = sim.report();
  for (const auto& spans : report.calls.front().spans) {  // the pmap call (device_get's transfer follows)
    int calls = 0;
    for (const Span& span : spans) calls += span.name == name ? 1 : 0;
    EXPECT_EQ(calls, 2 + 3) << "the tree's two dtypes, then the three leaves apart";
  }
}

TEST(TreeCollectives, PsumIsOneCallPerDtype) {
  expect_tree_call_matches_leaves([](const Tree& t) { return psum(t, "i"); },
                                  [](const Array& x) { return psum(x, "i"); }, "psum");
}

TEST(TreeCollectives, PmeanDividesEveryLeaf) {
  expect_tree_call_matches_leaves([](const Tree& t) { return pmean(t, "i"); },
                                  [](const Array& x) { return pmean(x, "i"); }, "pmean");
}

TEST(TreeCollectives, AllGatherIsOneCallPerDtypeTiledOrNot) {
  expect_tree_call_matches_leaves([](const Tree& t) { return all_gather(t, "i", 1, /*tiled=*/false); },
                                  [](const Array& x) { return all_gather(x, "i", 1, false); }, "all_gather");
  expect_tree_call_matches_leaves([](const Tree& t) { return all_gather(t, "i", 0, /*tiled=*/true); },
                                  [](const Array& x) { return all_gather(x, "i", 0, true); }, "all_gather");
}

TEST(TreeCollectives, PsumScatterIsOneCallPerDtype) {
  expect_tree_call_matches_leaves([](const Tree& t) { return psum_scatter(t, "i", 0, /*tiled=*/true); },
                                  [](const Array& x) { return psum_scatter(x, "i", 0, true); },
                                  "psum_scatter");
}

// A call joins at most 5e8 elements: three leaves of 2e8 are two all-reduces; gathered over 2 devices, three
// leaves of 1.5e8 (3e8 each gathered) are three all-gathers. Abstract, on devices large enough to hold them.
TEST(TreeCollectives, ACallJoinsAtMost5e8Elements) {
  const int p = 2;
  auto spec = testing::round_numbers_cluster(p);
  spec.device.memory_capacity = 1e12;
  Simulation sim(topologies::switch_cluster(spec));
  const auto three = [](std::int64_t elements) {
    return Tree::list({Array::abstract({p, elements}, DType::bf16), Array::abstract({p, elements}, DType::bf16),
                       Array::abstract({p, elements}, DType::bf16)});
  };
  auto f = pmap(
      [](const Args& a) -> Tree {
        return Tree::tuple({psum(a[0].tree(), "i"), all_gather(a[1].tree(), "i", 0, /*tiled=*/true)});
      },
      {.axis_name = "i"});
  f(sim, {three(200'000'000), three(150'000'000)});
  const SimulationReport report = sim.report();
  for (const auto& spans : report.calls.front().spans) {
    std::map<std::string, int> calls;
    for (const Span& span : spans) ++calls[span.name];
    EXPECT_EQ(calls["psum"], 2);
    EXPECT_EQ(calls["all_gather"], 3);
  }
}

TEST(TreeCollectives, PsumScatterChecksEveryLeaf) {
  const int p = 3;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  auto f = pmap([](const Args& a) -> Tree { return psum_scatter(a[0].tree(), "i", 0, /*tiled=*/true); },
                {.axis_name = "i"});
  try {
    f(sim, {Tree::list({Array::zeros({p, 6}), Array::zeros({p, 4})})});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "tiled reduce_scatter operand scatter dimension size 4 must be divisible by shard_count 3");
  }
}

}  // namespace
}  // namespace spmdsim
