// SimulationOptions::aggregate_ring_phases: a ring phase simulated as one transfer each way must give every
// device the same collective time and the same memory peaks as the per-message run, under the pinned
// alpha-beta model, with reductions that take time; on real data the ring all-reduce, whose values are
// computed once for the group, must also give every device the per-message result bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/presets.hpp"
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
  int channels = 0;             // nccl_ring's; 0: the simulation's
  std::string preset;           // a node preset instead of the round-numbers switch (its own network model)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("{}_{}_p{}{}{}{}", info.param.collective, info.param.algorithm, info.param.p,
                     info.param.dimensions.size() > 1 ? fmt::format("_d{}", info.param.dimensions.front()) : "",
                     info.param.floats ? fmt::format("_n{}", info.param.floats) : "",
                     info.param.channels ? fmt::format("_c{}", info.param.channels) : "");
}

// float32 elements per device: divisible by every p and product of dimensions below, so that every ring
// piece has the same size (the condition under which the aggregated phase is exact).
constexpr std::int64_t kFloats = 3 * 5 * 7 * 16 * 64;

// Per device: the time in the collective, the memory peak and what it held by tag; then the result's
// elements (their values for real data) and, for real data, its first element.
std::vector<double> run(const Case& c, bool aggregate, bool abstract,
                        std::vector<std::string> simgrid_config = alpha_beta_config()) {
  PlatformBuilder builder = c.preset.empty() ? topologies::switch_cluster(testing::round_numbers_cluster(c.p))
                                              : topologies::node_platform(topologies::node_preset(c.preset));
  if (!c.dimensions.empty())
    builder = [builder, dimensions = c.dimensions] {
      Platform platform = builder();
      platform.dimensions = dimensions;
      return platform;
    };
  SimulationOptions options{std::move(simgrid_config), {}};
  options.aggregate_ring_phases = aggregate;
  Simulation sim(builder, options);
  const CollectiveOptions call{.algorithm = c.algorithm, .channels = c.channels};
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
  const std::size_t per_device = 2 + kMaxMemoryTags;
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

// The algorithms of a kind that carry a booked run (Algorithm::booked): the booked run against the walk.
template <class AlgorithmT>
void add_booked(std::vector<Case>& out, const char* collective, std::span<const AlgorithmT> table) {
  for (const auto& algorithm : table)
    if (algorithm.booked != nullptr)
      for (int p : {2, 3, 4, 5, 8, 16}) out.push_back({collective, std::string(algorithm.name), p, {}});
}

std::vector<Case> cases() {
  std::vector<Case> out;
  add_booked(out, "psum", all_reduce_algorithms());
  add_booked(out, "all_gather", all_gather_algorithms());
  add_booked(out, "psum_scatter", reduce_scatter_algorithms());
  // NCCL's channels, each ring booked from its totals and all simulated at once on one actor per device.
  for (const char* collective : {"psum", "all_gather", "psum_scatter"}) {
    out.push_back({collective, "nccl_ring", 8, {}, 0, 4});
    out.push_back({collective, "nccl_ring", 8, {4, 2}, 0, 3});
  }
  out.push_back({"psum", "nccl_ring", 5, {}, 0, 2});
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

// The torus algorithms' parts run at once, each booking its ring phases on a lane of its own: where the parts
// share links at different phases (here one switch, sides 2, 3 and 2) the booked phases share them otherwise
// than the messages do, and the parts' scratch overlaps otherwise in time, so the time and the peak are close
// to the per-message ones, not equal (docs/performance.md#aggregated-phases).
class AggregatedTorusParts : public ::testing::TestWithParam<Case> {};

TEST_P(AggregatedTorusParts, StayNearThePerMessageTimeAndPeak) {
  const auto per_message = testing::in_child_process([] { return run(GetParam(), false, true); });
  const auto aggregated = run(GetParam(), true, true);
  ASSERT_EQ(aggregated.size(), per_message.size());
  const std::size_t per_device = 2 + kMaxMemoryTags;
  for (int d = 0; d < GetParam().p; ++d) {
    const std::size_t time = d * per_device, peak = time + 1;
    EXPECT_NEAR(aggregated[time], per_message[time], 0.05 * per_message[time]) << "device " << d;
    EXPECT_NEAR(aggregated[peak], per_message[peak], 0.1 * per_message[peak]) << "device " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Torus, AggregatedTorusParts,
                         ::testing::Values(Case{"psum", "torus", 12, {2, 3, 2}},
                                           Case{"all_gather", "torus", 12, {2, 3, 2}},
                                           Case{"psum_scatter", "torus", 12, {2, 3, 2}}),
                         case_name);

// SimGrid's default model (LV08) scales every message's latency by 13.01 and its bandwidth by 0.97; the
// phase waits out its other messages' latencies with the same factor.
TEST(AggregatedPhasesUnderLv08, TakeThePerMessageTime) {
  const Case c{"psum", "ring", 8, {}};
  const auto per_message = testing::in_child_process([&] { return run(c, false, true, {}); });
  expect_same(run(c, true, true, {}), per_message);
}

// On a node with NCCL's figures each channel runs NCCL's protocol (its pace, step overheads and passes): the
// booked channels take the per-message time of a run of equal steps, to SimGrid's resolution. (A reduce-scatter
// of many passes is booked at a higher scratch peak than the per-message run reaches: docs/performance.md.)
class AggregatedNcclChannels : public ::testing::TestWithParam<Case> {};

TEST_P(AggregatedNcclChannels, TakeThePerMessageTimeAndMemory) {
  const auto per_message = testing::in_child_process([] { return run(GetParam(), false, true, {}); });
  const auto aggregated = run(GetParam(), true, true, {});
  ASSERT_EQ(aggregated.size(), per_message.size());
  for (std::size_t i = 0; i < per_message.size(); ++i)
    EXPECT_NEAR(aggregated[i], per_message[i], 1e-6 * std::abs(per_message[i])) << "figure " << i;
}

INSTANTIATE_TEST_SUITE_P(Ring, AggregatedNcclChannels,
                         ::testing::Values(Case{"psum", "nccl_ring", 8, {}, 1 << 28, 0, "hgx_h200"},
                                           Case{"all_gather", "nccl_ring", 8, {}, 1 << 25, 0, "hgx_h200"}),
                         [](const ::testing::TestParamInfo<Case>& tested) {
                           return case_name(tested) + "_" + tested.param.preset;
                         });

// On real data the booked ring all-reduce takes the per-message time and memory; the other collectives still
// move per message, with the same figures by construction.
class AggregatedPhasesOnRealData : public ::testing::TestWithParam<Case> {};

TEST_P(AggregatedPhasesOnRealData, TakeThePerMessageTimeAndMemory) {
  const auto per_message = testing::in_child_process([] { return run(GetParam(), false, false); });
  EXPECT_GT(per_message.at(0), 0.0);
  const auto aggregated = run(GetParam(), true, false);
  expect_same(aggregated, per_message);
  if (GetParam().collective == "psum") {
    EXPECT_EQ(aggregated.back(), 0.5 * GetParam().p);
  }
}

INSTANTIATE_TEST_SUITE_P(Ring, AggregatedPhasesOnRealData,
                         ::testing::Values(Case{"psum", "ring", 2, {}}, Case{"psum", "ring", 5, {}},
                                           Case{"psum", "ring", 8, {}}, Case{"all_gather", "ring", 5, {}},
                                           Case{"psum_scatter", "ring", 5, {}},
                                           Case{"psum", "hierarchical", 8, {4, 2}}),
                         case_name);

TEST(AggregatedPhasesOnRealDataUnderLv08, TakeThePerMessageTime) {
  const Case c{"psum", "ring", 8, {}};
  const auto per_message = testing::in_child_process([&] { return run(c, false, false, {}); });
  expect_same(run(c, true, false, {}), per_message);
}

// The values: every device's result of a booked real all-reduce equals the per-message ring's bit for bit.
// The inputs span six orders of magnitude, so that summing in another order changes some last bits; pieces
// are of unequal sizes (n is prime), longer than the arithmetic's stripes at p = 2 and swept several to a
// stripe from p = 3 on (six at p = 16, where a sweep's ranks wrap around the ring).
struct ValuesCase {
  int p;
  std::string collective;  // psum, pmax or pmin
  DType dtype;
};

std::string values_case_name(const ::testing::TestParamInfo<ValuesCase>& info) {
  return fmt::format("{}_{}_p{}", info.param.collective, dtype_name(info.param.dtype), info.param.p);
}

constexpr std::int64_t kPrimeElements = 10007;

// How long device 0 held collective scratch: a booked ring holds its output buffer for no simulated time (held
// and released as its phase is booked), a walked one for the whole call.
double scratch_seconds(const MemoryTimeline& timeline) {
  double held_for = 0;
  Bytes held = 0;
  Seconds since = 0;
  for (const MemoryEvent& event : timeline) {
    if (event.tag != MemoryTag::collective_scratch) continue;
    if (held > 0) held_for += event.time - since;
    held += event.delta;
    since = event.time;
  }
  return held_for;
}

// Every element of the (p, n) result, as doubles (exact for these dtypes), then how long device 0 held
// collective scratch.
std::vector<double> all_reduce_values(const ValuesCase& c, bool aggregate) {
  SimulationOptions options{alpha_beta_config(), {}};
  options.aggregate_ring_phases = aggregate;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(c.p)), options);
  std::vector<double> values(static_cast<std::size_t>(c.p * kPrimeElements));
  // A linear congruential generator's top bits, uniform in [-1/2, 1/2), scaled by 10^-3 to 10^4 (whole numbers
  // up to 10^6 for int32).
  std::uint64_t state = 12345;
  for (double& v : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state >> 40) / static_cast<double>(1ULL << 24) - 0.5;
    v = c.dtype == DType::i32 ? std::floor(unit * 2e6)
                              : unit * std::pow(10.0, static_cast<int>(state >> 61) - 3);
  }
  const Array input = Array::from_values({c.p, kPrimeElements}, values, c.dtype);
  const std::string collective = c.collective;
  Tree out = pmap(
      [collective](const Args& a) -> Tree {
        const Array& x = a[0].array();
        return collective == "psum" ? psum(x, "i") : collective == "pmax" ? pmax(x, "i") : pmin(x, "i");
      },
      {.axis_name = "i"})(sim, {input});
  std::vector<double> outcome = sim.device_get(out).leaf().to_doubles();
  outcome.push_back(scratch_seconds(sim.report().memory_timelines.at(0)));
  return outcome;
}

class AggregatedRingAllReduceValues : public ::testing::TestWithParam<ValuesCase> {};

TEST_P(AggregatedRingAllReduceValues, AreThePerMessageRingsBitForBit) {
  const auto per_message = testing::in_child_process([] { return all_reduce_values(GetParam(), false); });
  const auto aggregated = all_reduce_values(GetParam(), true);
  ASSERT_EQ(aggregated.size(), per_message.size());
  const std::size_t elements = per_message.size() - 1;
  std::size_t different = 0;
  for (std::size_t i = 0; i < elements; ++i) different += aggregated[i] != per_message[i] ? 1 : 0;
  EXPECT_EQ(different, 0u) << "of " << elements << " elements";
  EXPECT_EQ(aggregated.back(), 0.0) << "collective scratch held for a while: the ring was walked, not booked";
  EXPECT_GT(per_message.back(), 0.0);
}

std::vector<ValuesCase> values_cases() {
  std::vector<ValuesCase> out;
  for (int p : {2, 3, 5, 8})
    for (const char* collective : {"psum", "pmax", "pmin"})
      for (DType dtype : {DType::f32, DType::i32}) out.push_back({p, collective, dtype});
  out.push_back({5, "psum", DType::bf16});
  out.push_back({3, "psum", DType::f64});
  out.push_back({16, "psum", DType::f32});
  out.push_back({16, "pmin", DType::f32});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ring, AggregatedRingAllReduceValues, ::testing::ValuesIn(values_cases()),
                         values_case_name);

}  // namespace
}  // namespace spmdsim
