// Nested pmap (pmap of a pmap, as jax.pmap's docstring nests them, or a pmap called in the function's body):
// the devices it takes, the collectives over either axis or both, what stays on the devices, and the forms
// refused.
// JAX's values for the same programs are in tests/reference/fixtures/nested_*.json (jax_fixtures_test).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "spmdsim/async_collectives.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

Simulation make_simulation(int devices) {
  return Simulation(topologies::switch_cluster(testing::free_compute_cluster(devices)),
                    {.simgrid_config = alpha_beta_config()});
}

// jax.pmap's docstring:
//   @partial(pmap, axis_name='rows')
//   @partial(pmap, axis_name='cols')
//   def normalize(x): ...
PmappedFunction normalize() {
  auto per_device = [](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return Tree::tuple({x / psum(x, "rows"), x / psum(x, "cols"), x / psum(x, {"rows", "cols"})});
  };
  return pmap(pmap(per_device, {.axis_name = "cols"}), {.axis_name = "rows"});
}

TEST(NestedPmap, NormalizesAsTheDocstringDoes) {
  Simulation sim = make_simulation(8);
  const Array x = Array::from_values({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tree out = sim.device_get(normalize()(sim, {x}));
  // Row sums 1, 5, 9, 13; column sums 12, 16; total 28.
  EXPECT_EQ(
      out[0].leaf().to_doubles(),
      (Array::from_values({4, 2}, {0, 1 / 16.0, 2 / 12.0, 3 / 16.0, 4 / 12.0, 5 / 16.0, 6 / 12.0, 7 / 16.0})
           .to_doubles()));
  EXPECT_EQ(out[1].leaf().to_doubles(),
            (Array::from_values({4, 2}, {0, 1.0, 2 / 5.0, 3 / 5.0, 4 / 9.0, 5 / 9.0, 6 / 13.0, 7 / 13.0})
                 .to_doubles()));
  EXPECT_EQ(
      out[2].leaf().to_doubles(),
      (Array::from_values({4, 2}, {0, 1 / 28.0, 2 / 28.0, 3 / 28.0, 4 / 28.0, 5 / 28.0, 6 / 28.0, 7 / 28.0})
           .to_doubles()));
}

TEST(NestedPmap, TakesTheProductOfTheAxesInDevicesOuterMajor) {
  Simulation sim = make_simulation(8);
  auto indices = [](const Args&) -> Tree {
    return Tree::tuple({axis_index("i"), axis_index("j"), axis_index({"i", "j"}), axis_index({"j", "i"})});
  };
  const Tree out = sim.device_get(
      pmap(pmap(indices, {.axis_name = "j"}), {.axis_name = "i"})(sim, {Array::zeros({2, 4})}));
  EXPECT_EQ(out[0].leaf().to_doubles(), (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(out[1].leaf().to_doubles(), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(out[2].leaf().to_doubles(), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(out[3].leaf().to_doubles(), (std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(sim.report().calls.at(0).devices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Under the alpha-beta model a ring all-reduce takes 2(p-1) alpha + 2(p-1)/p n beta (alpha = 2 us between
// devices, 100 GB/s): psum over 'j' runs two independent rings of 4 devices, over ('i', 'j') one ring of 8.
void expect_psum_ring_of(const AxisName& name, int p) {
  Simulation sim = make_simulation(8);
  auto body = [name](const Args& a) -> Tree { return psum(a[0].array(), name); };
  pmap(pmap(body, {.axis_name = "j"}), {.axis_name = "i"})(sim, {Array::zeros({2, 4, 8})});
  const SimulationReport report = sim.report();
  const auto& times = report.calls.at(0).times.at(0);
  EXPECT_NEAR(times.communication.at("psum"), 2.0 * (p - 1) * 2e-6 + 2.0 * (p - 1) / p * 32 / 100e9, 1e-12);
}

TEST(NestedPmap, APsumOverTheInnerAxisIsARingOfItsGroup) {
  expect_psum_ring_of("j", 4);
}

TEST(NestedPmap, APsumOverBothAxesIsARingOfAll) {
  expect_psum_ring_of({"i", "j"}, 8);
}

TEST(NestedPmap, AnAsynchronousPsumTakesATupleOfNames) {
  Simulation sim = make_simulation(8);
  auto body = [](const Args& a) -> Tree {
    PendingCollective total = psum_start(a[0].array(), {"i", "j"});
    return total.wait();
  };
  const Array x = Array::from_values({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tree out = pmap(pmap(body, {.axis_name = "j"}), {.axis_name = "i"})(sim, {x});
  EXPECT_EQ(sim.device_get(out).leaf().to_doubles(), std::vector<double>(8, 28.0));
}

TEST(NestedPmap, ResultsStayOnTheDevicesForTheNextCall) {
  Simulation sim = make_simulation(8);
  const auto twice = pmap(pmap([](const Args& a) -> Tree { return a[0].array() * 2.0; }, {.axis_name = "j"}),
                          {.axis_name = "i"});
  const Tree first = twice(sim, {Array::full({2, 4, 3}, 1.0)});
  const Tree second = twice(sim, {first.leaf()});
  EXPECT_EQ(sim.device_get(second).leaf().to_doubles(), std::vector<double>(24, 4.0));
  const SimulationReport report = sim.report();
  for (const auto& times : report.calls.at(1).times) EXPECT_EQ(times.transfer, 0.0);
}

// The forms spmdsim cannot run, or JAX refuses, fail before any device runs: nothing is reported and the
// clock has not moved.
void expect_refused_before_start(Simulation& sim, const PmappedFunction& fn, const Array& x,
                                 const std::string& type, const std::string& message) {
  try {
    fn(sim, {x});
    ADD_FAILURE() << "no error; expected " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.python_type(), type);
    EXPECT_EQ(std::string(e.what()), message);
  }
  EXPECT_TRUE(sim.report().calls.empty());
  EXPECT_EQ(sim.now(), 0.0);
}

TEST(NestedPmap, RefusesWhatItCannotRunBeforeTheSimulationStarts) {
  Simulation sim = make_simulation(8);
  const DeviceFunction same = [](const Args& a) -> Tree { return a[0].tree(); };
  const Array x = Array::zeros({2, 4});
  expect_refused_before_start(
      sim, pmap(pmap(same, {.axis_name = "j", .devices = std::vector<int>{0, 1, 2, 3}}), {.axis_name = "i"}),
      x, "ValueError", "Nested pmap with explicit devices argument.");
  expect_refused_before_start(sim,
                              pmap(pmap(same, {.out_axes = Axes(1), .axis_name = "j"}), {.axis_name = "i"}),
                              Array::zeros({2, 4, 3}), "ValueError", "Operation creation failed");
  expect_refused_before_start(
      sim, pmap(pmap(same, {.out_axes = Axes(none), .axis_name = "j"}), {.axis_name = "i"}), x, "TypeError",
      "'NoneType' object cannot be interpreted as an integer");
  expect_refused_before_start(
      sim, pmap(pmap(same, {.axis_name = "j"}), {.axis_name = "i"}), Array::zeros({4, 4}), "ValueError",
      "compiling computation that requires 16 logical devices, but only 8 XLA devices are available "
      "(num_replicas=16)");
}

// The other form of nesting, a pmap called in the function's body with work around it (JAX's values for such
// programs are in tests/reference/fixtures/nested_called_*.json). The outer function runs on every device of
// the inner axis alike: a psum over 'i' before the inner pmap is a ring of 2 devices per inner index, a psum
// over 'j' inside it a ring of 4 per outer index.
TEST(NestedPmap, APmapCalledInTheBodyRunsOnItsDeclaredAxis) {
  Simulation sim = make_simulation(8);
  const auto inner = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "j"); }, {.axis_name = "j"});
  const auto outer = pmap(
      [&](const Args& a) -> Tree {
        const Array& x = a[0].array();
        return inner({x + psum(x, "i")}).leaf() * 2.0;
      },
      {.axis_name = "i", .inner_axes = {{"j", 4}}});
  const Array x = Array::from_values({2, 4, 8}, std::vector<double>(64, 1.0));
  const Tree out = outer(sim, {x});
  // Each element: (1 + 2) summed over 4 inner devices, doubled.
  EXPECT_EQ(sim.device_get(out).leaf().to_doubles(), std::vector<double>(64, 24.0));
  const SimulationReport report = sim.report();
  const auto& call = report.calls.at(0);
  EXPECT_EQ(call.devices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  auto ring = [](int p, double bytes) { return 2.0 * (p - 1) * 2e-6 + 2.0 * (p - 1) / p * bytes / 100e9; };
  // A ring of 2 over 'i' on the outer slice (4 x 8 floats), then a ring of 4 over 'j' on the inner one (8).
  EXPECT_NEAR(call.times.at(0).communication.at("psum"), ring(2, 128) + ring(4, 32), 1e-12);
}

TEST(NestedPmap, APmapCalledInTheBodyWithoutADeclaredAxisIsAnErrorNotADeadlock) {
  Simulation sim = make_simulation(8);
  const auto inner = pmap([](const Args& a) -> Tree { return a[0].array(); }, {.axis_name = "j"});
  const auto outer = pmap([&](const Args& a) -> Tree { return inner(sim, a); }, {.axis_name = "i"});
  try {
    outer(sim, {Array::zeros({2, 4})});
    ADD_FAILURE() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "pmap (axis_name 'j', size 4) called inside a pmapped function whose options declare no axis "
              "for it: spmdsim picks the devices before the function runs, so declare the inner pmap in the "
              "outer pmap's options, inner_axes = {{\"j\", 4}}, or nest the functions, pmap(pmap(f, ...), "
              "...)");
  }
}

TEST(NestedPmap, APmapCalledInTheBodyMustMatchItsDeclaredAxis) {
  Simulation sim = make_simulation(8);
  const auto inner = pmap([](const Args& a) -> Tree { return a[0].array(); }, {.axis_name = "j"});
  const auto outer =
      pmap([&](const Args& a) -> Tree { return inner(a); }, {.axis_name = "i", .inner_axes = {{"j", 2}}});
  try {
    outer(sim, {Array::zeros({2, 4})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "pmap called inside a pmapped function maps axis_name 'j' of size 4, but the axis declared for it "
        "(inner_axes) is 'j' of size 2");
  }
}

TEST(NestedPmap, ThePmapOfADeviceIsNotCalledFromTheHost) {
  const auto inner = pmap([](const Args& a) -> Tree { return a[0].array(); }, {.axis_name = "j"});
  try {
    inner({Array::zeros({2})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "pmap called without a Simulation outside a pmapped function: call it as fn(sim, args)");
  }
}

TEST(NestedPmap, InnerAxesBelongToTheFunctionThatCallsThePmap) {
  Simulation sim = make_simulation(8);
  const DeviceFunction same = [](const Args& a) -> Tree { return a[0].tree(); };
  expect_refused_before_start(
      sim, pmap(pmap(same, {.axis_name = "j"}), {.axis_name = "i", .inner_axes = {{"k", 2}}}),
      Array::zeros({2, 2}), "ValueError",
      "pmap: inner_axes belong to the options of the pmap whose function calls the inner "
      "pmap; this one's function is the nested pmap inside it");
  expect_refused_before_start(sim, pmap(same, {.axis_name = "i", .inner_axes = {{"j", 0}}}),
                              Array::zeros({2, 2}), "ValueError",
                              "pmap: inner_axes sizes must be at least 1, got 0");
}

}  // namespace
}  // namespace spmdsim
