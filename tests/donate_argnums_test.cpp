// pmap's donate_argnums, as jax.pmap's: a donated argument's device buffers are held by the function's
// arguments alone, so they are released as soon as the function lets go of them; a donated device-resident
// array is deleted, and using it again is JAX's error, with JAX 0.5.2's wording.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr int kDevices = 2;
constexpr Bytes kLeafBytes = 1024 * 4;  // one float32 leaf [1024] per device

// {a, b} -> {2a, 2b}, one leaf after the other, each old leaf let go of once its new one is made (as an
// in-place optimizer update does).
Tree doubled_leaf_by_leaf(Args args) {
  Tree state = args[0].tree();
  args.clear();
  Array a = state["a"].leaf();
  Array b = state["b"].leaf();
  state = Tree();
  Array new_a = a * 2.0;
  a = Array();
  Array new_b = b * 2.0;
  b = Array();
  return Tree::dict({{"a", new_a}, {"b", new_b}});
}

// Two leaves made on the devices by one call, then doubled by `step`.
Bytes doubling_peak(const std::vector<int>& donate_argnums) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto make = pmap(
      [](const Args&) -> Tree {
        return Tree::dict({{"a", Array::full({1024}, 1.0)}, {"b", Array::full({1024}, 1.0)}});
      },
      {});
  const Tree state = make(sim, {Array::zeros({kDevices})});
  const auto step = pmap(doubled_leaf_by_leaf, {.donate_argnums = donate_argnums});
  step(sim, {state});
  return sim.report().calls.back().memory[0].peak;
}

// Kept, the old state is live while the new one is made: four leaves at the peak. Donated, each old leaf is
// released as its new one is made: three.
TEST(DonateArgnums, ADonatedArgumentIsReleasedWhenTheFunctionLetsGoOfIt) {
  EXPECT_EQ(doubling_peak({}), 4 * kLeafBytes);
  EXPECT_EQ(doubling_peak({0}), 3 * kLeafBytes);
}

// The values are the same, and the call's results are all that is left on the devices.
TEST(DonateArgnums, ValuesAreTheSameAndTheOldBuffersAreGone) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto put = pmap([](const Args& a) -> Tree {
    return Tree::dict({{"a", a[0].array()}, {"b", a[0].array() + 1.0}});
  });
  const Tree state = put(sim, {Array::full({kDevices, 1024}, 1.0)});
  const auto step = pmap(doubled_leaf_by_leaf, {.donate_argnums = {0}});
  const Tree result = step(sim, {state});
  const Tree out = sim.device_get(result);
  EXPECT_EQ(out["a"].leaf().item(0), 2.0);
  EXPECT_EQ(out["b"].leaf().item(kDevices * 1024 - 1), 4.0);
  EXPECT_EQ(sim.report().memory_timelines[0].back().in_use, 2 * kLeafBytes);
}

TEST(DonateArgnums, ADonatedArrayIsDeleted) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto put = pmap([](const Args& a) -> Tree { return a[0].array(); });
  const Array x = put(sim, {Array::full({kDevices, 3}, 1.0)}).leaf();
  const auto step = pmap([](const Args& a) -> Tree { return a[0].array() + 1.0; }, {.donate_argnums = {0}});
  step(sim, {x});
  try {
    sim.device_get(Tree(x));
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "Array has been deleted with shape=float32[2,3].");
  }
  try {
    step(sim, {x});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "INVALID_ARGUMENT: Invalid buffer passed: buffer has been deleted or donated.");
  }
}

// A host array given to a donated argument is sent to the devices as any other; it stays the host's.
TEST(DonateArgnums, AHostArrayIsNotDeleted) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto step = pmap([](const Args& a) -> Tree { return a[0].array() + 1.0; }, {.donate_argnums = {0}});
  const Array x = Array::full({kDevices, 3}, 1.0);
  step(sim, {x});
  EXPECT_EQ(sim.device_get(step(sim, {x})).leaf().item(0), 2.0);
}

TEST(DonateArgnums, AnArrayDonatedAndPassedAgainInTheSameCallIsRefused) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto put = pmap([](const Args& a) -> Tree { return a[0].array(); });
  const Array x = put(sim, {Array::full({kDevices, 3}, 1.0)}).leaf();
  const auto step =
      pmap([](const Args& a) -> Tree { return a[0].array() + a[1].array(); }, {.donate_argnums = {0}});
  try {
    step(sim, {x, x});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call to "
              "Execute() (flattened argument 1, first use: 0). Toy example for this bug: `f(donate(a), a)`.");
  }
  EXPECT_EQ(sim.device_get(Tree(x)).leaf().item(0), 1.0);  // refused before anything was taken
}

TEST(DonateArgnums, StaticAndDonatedArgumentsCannotIntersect) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto step = pmap([](const Args& a) -> Tree { return a[0].array(); },
                         {.static_broadcasted_argnums = {1}, .donate_argnums = {1}});
  try {
    step(sim, {Array::full({kDevices, 3}, 1.0), 2});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "`static_argnums` [1] and `donate_argnums` [1] cannot intersect.");
  }
}

}  // namespace
}  // namespace spmdsim
