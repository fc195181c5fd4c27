// SimulationOptions::aggregate_abstract_phases: a ring phase on abstract data simulated as one transfer each
// way must give every device the same collective time and the same memory peaks as the per-message run,
// under the pinned alpha-beta model, with reductions that take time; real data must be left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "child_process.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

struct Case {
  std::string collective;  // psum with an algorithm, all_gather or psum_scatter
  std::string algorithm;
  int p;
  std::vector<int> dimensions;  // the platform's logical shape, for hierarchical and multidim
  std::int64_t floats = 0;      // per device; 0: kFloats
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("{}_{}_p{}{}", info.param.collective, info.param.algorithm, info.param.p,
                     info.param.floats ? fmt::format("_n{}", info.param.floats) : "");
}

// float32 elements per device: divisible by every p and product of dimensions below, so that every ring
// piece has the same size (the condition under which the aggregated phase is exact).
constexpr std::int64_t kFloats = 3 * 5 * 7 * 16 * 64;

// Per device: the time in the collective, the memory peak and what it held by tag; then the result's
// elements (their values for real data) and, for real data, its first element.
std::vector<double> run(const Case& c, bool aggregate, bool abstract,
                        std::vector<std::string> simgrid_config = alpha_beta_config()) {
  PlatformBuilder builder = topologies::switch_cluster(testing::round_numbers_cluster(c.p));
  if (!c.dimensions.empty())
    builder = [builder, dimensions = c.dimensions] {
      Platform platform = builder();
      platform.dimensions = dimensions;
      return platform;
    };
  SimulationOptions options{std::move(simgrid_config), {}};
  options.aggregate_abstract_phases = aggregate;
  Simulation sim(builder, options);
  const CollectiveOptions call{.algorithm = c.algorithm};
  std::function<Array(const Array&)> collective;
  if (c.collective == "psum")
    collective = [call](const Array& x) { return psum(x, "i", {}, call); };
  else if (c.collective == "all_gather")
    collective = [call](const Array& x) { return all_gather(x, "i", 0, false, {}, call); };
  else
    collective = [call](const Array& x) { return psum_scatter(x, "i", 0, true, {}, call); };
  const Shape shape{c.p, c.floats ? c.floats : kFloats};
  const Array input = abstract ? Array::abstract(shape) : Array::full(shape, 0.5);
  Tree out = pmap([collective](const Args& a) -> Tree { return collective(a[0].array()); }, {.axis_name = "i"})(
      sim, {input});
  const auto report = sim.report();
  std::vector<double> outcome;
  for (std::size_t d = 0; d < report.calls.back().times.size(); ++d) {
    double seconds = 0;
    for (const auto& [name, time] : report.calls.back().times[d].communication) seconds += time;
    const DeviceMemory& memory = report.calls.back().memory[d];
    outcome.push_back(seconds);
    outcome.push_back(static_cast<double>(memory.peak));
    for (Bytes held : memory.at_peak) outcome.push_back(static_cast<double>(held));
  }
  const Array result = sim.device_get(out).leaf();
  outcome.push_back(static_cast<double>(result.size()));
  if (!abstract) outcome.push_back(result.item(0));
  return outcome;
}

// Equal figures, the times to 1e-12 relative (they are sums in another order).
void expect_same(const std::vector<double>& aggregated, const std::vector<double>& per_message) {
  ASSERT_EQ(aggregated.size(), per_message.size());
  for (std::size_t i = 0; i < per_message.size(); ++i)
    EXPECT_NEAR(aggregated[i], per_message[i], 1e-12 * std::abs(per_message[i])) << "figure " << i;
}

// Per device: the per-message run's peak and what it held at its peak, the time left out.
void expect_same_memory(const std::vector<double>& aggregated, const std::vector<double>& per_message, int p) {
  ASSERT_EQ(aggregated.size(), per_message.size());
  const std::size_t per_device = 2 + kNumMemoryTags;
  for (int d = 0; d < p; ++d)
    for (std::size_t i = 1; i < per_device; ++i)
      EXPECT_EQ(aggregated[d * per_device + i], per_message[d * per_device + i]) << "device " << d << " figure " << i;
}

class AggregatedPhases : public ::testing::TestWithParam<Case> {};

TEST_P(AggregatedPhases, AbstractRunTakesThePerMessageTimeAndMemory) {
  const auto per_message = testing::in_child_process([] { return run(GetParam(), false, true); });
  EXPECT_GT(per_message.at(0), 0.0);
  expect_same(run(GetParam(), true, true), per_message);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int p : {2, 3, 4, 5, 8, 16}) {
    out.push_back({"psum", "ring", p, {}});
    out.push_back({"all_gather", "ring", p, {}});
    out.push_back({"psum_scatter", "ring", p, {}});
  }
  out.push_back({"psum", "hierarchical", 8, {4, 2}});
  out.push_back({"psum", "multidim", 12, {2, 3, 2}});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ring, AggregatedPhases, ::testing::ValuesIn(cases()), case_name);

// Pieces of unequal sizes (n not divisible by p, and fewer elements than devices): the phase's time is
// exact only for equal pieces, but the memory each device holds at its peak is always the per-message one.
class AggregatedPhasesOfUnequalPieces : public ::testing::TestWithParam<Case> {};

TEST_P(AggregatedPhasesOfUnequalPieces, HoldThePerMessageMemory) {
  const auto per_message = testing::in_child_process([] { return run(GetParam(), false, true); });
  expect_same_memory(run(GetParam(), true, true), per_message, GetParam().p);
}

INSTANTIATE_TEST_SUITE_P(Ring, AggregatedPhasesOfUnequalPieces,
                         ::testing::Values(Case{"psum", "ring", 5, {}, 1003}, Case{"psum", "ring", 8, {}, 3},
                                           Case{"psum", "ring", 7, {}, 7 * 1000 + 6},
                                           Case{"all_gather", "ring", 5, {}, 1003}),
                         case_name);

// SimGrid's default model (LV08) scales every message's latency by 13.01 and its bandwidth by 0.97; the
// phase waits out its other messages' latencies with the same factor.
TEST(AggregatedPhasesUnderLv08, TakeThePerMessageTime) {
  const Case c{"psum", "ring", 8, {}};
  const auto per_message = testing::in_child_process([&] { return run(c, false, true, {}); });
  expect_same(run(c, true, true, {}), per_message);
}

// Real data always moves per message: the option changes neither its values nor its times.
TEST(AggregatedPhasesOnRealData, ChangeNothing) {
  const Case c{"psum", "ring", 5, {}};
  const auto per_message = testing::in_child_process([&] { return run(c, false, false); });
  const auto asked = run(c, true, false);
  expect_same(asked, per_message);
  EXPECT_EQ(asked.back(), 2.5);
}

}  // namespace
}  // namespace spmdsim
