// Every registered all-gather, reduce-scatter and all-to-all algorithm: its results against values computed
// here from the inputs, its simulated time against its registered cost and against the formula written out
// below, the auto policy's choice, and the error for a device count an algorithm refuses.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/selection.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/torus.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// The free-compute test cluster: alpha = two 1 us fabric links, beta = 1 / 100 GB/s, gamma = 0.
constexpr double kAlpha = 2e-6;
constexpr double kBeta = 1.0 / 100e9;

constexpr CollectiveKind kKinds[] = {CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                     CollectiveKind::all_to_all};
const std::vector<int> kDeviceCounts{1, 2, 3, 4, 5, 6, 7, 8, 16};

// The name of the call in the report for each kind.
std::string primitive(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather:
      return "all_gather";
    case CollectiveKind::reduce_scatter:
      return "psum_scatter";
    case CollectiveKind::all_to_all:
      return "all_to_all";
    default:
      throw std::logic_error("not a kind of this suite");
  }
}

bool accepted(CollectiveKind kind, std::string_view algorithm, int p) {
  try {
    check_device_count(kind, algorithm, p);
    return true;
  } catch (const ValueError&) {
    return false;
  }
}

struct Case {
  CollectiveKind kind;
  std::string algorithm;
  int p;
};

// Every registered algorithm of the three kinds on every device count it accepts.
std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (CollectiveKind kind : kKinds)
    for (std::string_view name : algorithm_names(kind))
      for (int p : kDeviceCounts)
        if (accepted(kind, name, p)) cases.push_back({kind, std::string(name), p});
  return cases;
}

// For gtest's messages and ctest's test list.
void PrintTo(const Case& c, std::ostream* os) {
  *os << collective_kind_name(c.kind) << " '" << c.algorithm << "' on " << c.p << " devices";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("{}_{}_p{}", collective_kind_name(info.param.kind), info.param.algorithm, info.param.p);
}

// Distinct float32 values that are not small integers, so that the order of a sum shows in its rounding.
Array inputs(const Shape& shape) {
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t k = 0; k < values.size(); ++k)
    values[k] = 8 * std::sin(0.7 * static_cast<double>(k) + 0.3);
  return Array::from_values(shape, values);
}

// Runs `collective` on each device's slice of `global` (mapped on axis 0); returns the stacked results.
Array run(Simulation& sim, const Array& global, std::function<Array(const Array&)> collective) {
  auto f = pmap([collective](const Args& a) -> Tree { return collective(a[0].array()); }, {.axis_name = "i"});
  return sim.device_get(f(sim, {global})).leaf();
}

// The row-major flat index of element (i0, i1, ...) of an array of `shape`.
std::int64_t flat_index(const Shape& shape, const std::vector<std::int64_t>& index) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// ---------------------------------------------------------------------------------------------------------
// (1) Results: data movement exactly, sums within float32 rounding.

class Correctness : public ::testing::TestWithParam<Case> {
 protected:
  CollectiveOptions options() const { return {.algorithm = GetParam().algorithm}; }
};

PlatformBuilder test_switch(int p) { return topologies::switch_cluster(testing::round_numbers_cluster(p)); }

void expect_all_gather(const Case& c, const CollectiveOptions& options, const PlatformBuilder& platform) {
  const int p = c.p;
  Simulation sim(platform);
  const Array x = inputs({p, 2, 3});  // device j holds x[j], of shape (2, 3)

  // Untiled on axis 0: every device gets (p, 2, 3) with x[j] at j.
  Array untiled =
      run(sim, x, [&](const Array& mine) { return all_gather(mine, "i", 0, false, {}, options); });
  std::vector<double> expected;
  for (int d = 0; d < p; ++d)
    for (int j = 0; j < p; ++j)
      for (int e = 0; e < 6; ++e) expected.push_back(x.item(j * 6 + e));
  EXPECT_TRUE(array_equal(untiled, Array::from_values({p, p, 2, 3}, expected))) << untiled.to_string();

  // Tiled on axis 1: every device gets (2, 3p), row a holding x[0][a], x[1][a], ...
  Array tiled = run(sim, x, [&](const Array& mine) { return all_gather(mine, "i", 1, true, {}, options); });
  expected.clear();
  for (int d = 0; d < p; ++d)
    for (int a = 0; a < 2; ++a)
      for (int j = 0; j < p; ++j)
        for (int b = 0; b < 3; ++b) expected.push_back(x.item(flat_index({p, 2, 3}, {j, a, b})));
  EXPECT_TRUE(array_equal(tiled, Array::from_values({p, 2, 3 * p}, expected))) << tiled.to_string();

  // Zero-size pieces and abstract pieces keep their shapes.
  Array empty = run(sim, Array::zeros({p, 0, 3}),
                    [&](const Array& mine) { return all_gather(mine, "i", 0, false, {}, options); });
  EXPECT_EQ(empty.shape(), (Shape{p, p, 0, 3}));
  Array abstract = run(sim, Array::abstract({p, 2, 3}),
                       [&](const Array& mine) { return all_gather(mine, "i", 1, true, {}, options); });
  EXPECT_TRUE(abstract.is_abstract());
  EXPECT_EQ(abstract.shape(), (Shape{p, 2, 3 * p}));
}

// float32 sums of p terms in any order (any summation tree is at most p-1 additions deep):
// |computed - exact| <= gamma_{p-1} * sum |terms|, gamma_k = k u / (1 - k u), u = 2^-24 (Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., §4.2). The exact sum is taken in double from the
// float32 inputs, whose sums of 16 terms double represents exactly.
void expect_sums(const Array& actual, const Shape& shape, const std::vector<double>& exact,
                 const std::vector<double>& magnitude, int p) {
  ASSERT_EQ(actual.shape(), shape);
  const double u = std::ldexp(1.0, -24);
  const double gamma = (p - 1) * u / (1 - (p - 1) * u);
  for (std::size_t k = 0; k < exact.size(); ++k)
    EXPECT_LE(std::abs(actual.item(static_cast<std::int64_t>(k)) - exact[k]), gamma * magnitude[k])
        << "element " << k << ": " << actual.item(static_cast<std::int64_t>(k)) << " vs exact " << exact[k];
}

void expect_psum_scatter(const Case& c, const CollectiveOptions& options, const PlatformBuilder& platform) {
  const int p = c.p;
  Simulation sim(platform);

  // Untiled on dimension 0: device d gets sum over j of x[j][d], of shape (3).
  const Array x = inputs({p, p, 3});
  Array untiled =
      run(sim, x, [&](const Array& mine) { return psum_scatter(mine, "i", 0, false, {}, options); });
  std::vector<double> exact, magnitude;
  for (int d = 0; d < p; ++d)
    for (int e = 0; e < 3; ++e) {
      double sum = 0, abs_sum = 0;
      for (int j = 0; j < p; ++j) {
        const double v = x.item(flat_index({p, p, 3}, {j, d, e}));
        sum += v;
        abs_sum += std::abs(v);
      }
      exact.push_back(sum);
      magnitude.push_back(abs_sum);
    }
  expect_sums(untiled, {p, 3}, exact, magnitude, p);

  // Tiled on dimension 1: device d gets sum over j of x[j][:, 2d:2d+2], of shape (2, 2).
  const Array y = inputs({p, 2, 2 * p});
  Array tiled = run(sim, y, [&](const Array& mine) { return psum_scatter(mine, "i", 1, true, {}, options); });
  exact.clear();
  magnitude.clear();
  for (int d = 0; d < p; ++d)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        double sum = 0, abs_sum = 0;
        for (int j = 0; j < p; ++j) {
          const double v = y.item(flat_index({p, 2, 2 * p}, {j, a, 2 * d + b}));
          sum += v;
          abs_sum += std::abs(v);
        }
        exact.push_back(sum);
        magnitude.push_back(abs_sum);
      }
  expect_sums(tiled, {p, 2, 2}, exact, magnitude, p);

  Array empty = run(sim, Array::zeros({p, p, 0}),
                    [&](const Array& mine) { return psum_scatter(mine, "i", 0, false, {}, options); });
  EXPECT_EQ(empty.shape(), (Shape{p, 0}));
  Array abstract = run(sim, Array::abstract({p, 2, 2 * p}),
                       [&](const Array& mine) { return psum_scatter(mine, "i", 1, true, {}, options); });
  EXPECT_TRUE(abstract.is_abstract());
  EXPECT_EQ(abstract.shape(), (Shape{p, 2, 2}));
}

void expect_all_to_all(const Case& c, const CollectiveOptions& options) {
  const int p = c.p;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));

  // Untiled, split and concat on axis 0: device d gets (p, 2) with x[j][d] at j.
  const Array x = inputs({p, p, 2});
  Array untiled =
      run(sim, x, [&](const Array& mine) { return all_to_all(mine, "i", 0, 0, false, {}, options); });
  std::vector<double> expected;
  for (int d = 0; d < p; ++d)
    for (int j = 0; j < p; ++j)
      for (int e = 0; e < 2; ++e) expected.push_back(x.item(flat_index({p, p, 2}, {j, d, e})));
  EXPECT_TRUE(array_equal(untiled, Array::from_values({p, p, 2}, expected))) << untiled.to_string();

  // Tiled, split on axis 0 and concat on axis 1: device d gets (2, 3p), columns 3j..3j+2 holding rows
  // 2d, 2d+1 of x[j].
  const Array y = inputs({p, 2 * p, 3});
  Array tiled =
      run(sim, y, [&](const Array& mine) { return all_to_all(mine, "i", 0, 1, true, {}, options); });
  expected.clear();
  for (int d = 0; d < p; ++d)
    for (int a = 0; a < 2; ++a)
      for (int j = 0; j < p; ++j)
        for (int b = 0; b < 3; ++b) expected.push_back(y.item(flat_index({p, 2 * p, 3}, {j, 2 * d + a, b})));
  EXPECT_TRUE(array_equal(tiled, Array::from_values({p, 2, 3 * p}, expected))) << tiled.to_string();

  Array empty = run(sim, Array::zeros({p, p, 0}),
                    [&](const Array& mine) { return all_to_all(mine, "i", 0, 0, false, {}, options); });
  EXPECT_EQ(empty.shape(), (Shape{p, p, 0}));
  Array abstract = run(sim, Array::abstract({p, 2 * p, 3}),
                       [&](const Array& mine) { return all_to_all(mine, "i", 0, 1, true, {}, options); });
  EXPECT_TRUE(abstract.is_abstract());
  EXPECT_EQ(abstract.shape(), (Shape{p, 2, 3 * p}));
}

TEST_P(Correctness, ResultsEqualTheValuesComputedFromTheInputs) {
  switch (GetParam().kind) {
    case CollectiveKind::all_gather:
      return expect_all_gather(GetParam(), options(), test_switch(GetParam().p));
    case CollectiveKind::reduce_scatter:
      return expect_psum_scatter(GetParam(), options(), test_switch(GetParam().p));
    case CollectiveKind::all_to_all:
      return expect_all_to_all(GetParam(), options());
    default:
      FAIL();
  }
}

INSTANTIATE_TEST_SUITE_P(GatherScatterAllToAll, Correctness, ::testing::ValuesIn(all_cases()), case_name);

// The torus algorithms on tori and meshes, where each part walks the dimensions in its own order (and way,
// on a torus): the pieces and sums land where the rank order puts them. Sides of different lengths, so that a
// coordinate mixed up with another shows.
PlatformBuilder test_torus(const std::vector<int>& shape, bool wraparound = true) {
  int p = 1;
  for (int side : shape) p *= side;
  return topologies::torus({.num_devices = p,
                            .shape = shape,
                            .wraparound = wraparound,
                            .device = testing::round_numbers_cluster(p).device,
                            .device_link = {100e9, 1e-6},
                            .host_link = {10e9, 1e-6}});
}

TEST(TorusCorrectness, AllGatherOnAThreeByTwoMesh) {
  expect_all_gather({CollectiveKind::all_gather, "torus", 6}, {.algorithm = "torus"}, test_torus({3, 2}, false));
}

TEST(TorusCorrectness, ReduceScatterOnAThreeByTwoMesh) {
  expect_psum_scatter({CollectiveKind::reduce_scatter, "torus", 6}, {.algorithm = "torus"},
                      test_torus({3, 2}, false));
}

TEST(TorusCorrectness, AllGatherOnAThreeByTwoTorus) {
  expect_all_gather({CollectiveKind::all_gather, "torus", 6}, {.algorithm = "torus"}, test_torus({3, 2}));
}

TEST(TorusCorrectness, AllGatherOnATwoByThreeByTwoTorus) {
  expect_all_gather({CollectiveKind::all_gather, "torus", 12}, {.algorithm = "torus"}, test_torus({2, 3, 2}));
}

TEST(TorusCorrectness, ReduceScatterOnAThreeByTwoTorus) {
  expect_psum_scatter({CollectiveKind::reduce_scatter, "torus", 6}, {.algorithm = "torus"}, test_torus({3, 2}));
}

TEST(TorusCorrectness, ReduceScatterOnATwoByThreeByTwoTorus) {
  expect_psum_scatter({CollectiveKind::reduce_scatter, "torus", 12}, {.algorithm = "torus"},
                      test_torus({2, 3, 2}));
}

// ---------------------------------------------------------------------------------------------------------
// (2) Time under the pinned alpha-beta model: the registered cost, and the formula written out here.

Simulation alpha_beta_simulation(int p) {
  return Simulation(topologies::switch_cluster(testing::free_compute_cluster(p)), {alpha_beta_config(), {}});
}

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected))
      << "actual " << actual << " expected " << expected;
}

int ceil_lg(int p) {
  int steps = 0;
  while ((1 << steps) < p) ++steps;
  return steps;
}

// The formulas of REFERENCES.md §3.1 with gamma = 0, n in each kind's convention (the gathered total for
// all-gather and reduce-scatter, all that one rank sends, its own block included, for all-to-all), and the
// switch-derived formula for the direct algorithms (see direct_all_gather.cpp). Throws for a name it lacks,
// so a new algorithm needs its formula here.
double formula(CollectiveKind kind, const std::string& name, int p, double n) {
  const double a = kAlpha, b = kBeta;
  const double share = (p - 1.0) / p;
  // nccl_ring on one switch: its channels share every port, the ring's time (nccl_channels_test.cpp); nccl
  // runs nccl_ring for these kinds.
  // torus on one switch: its two parts (a flat group, two rings one each way) share every port, the ring's time.
  if (name == "ring" || name == "torus" || name == "nccl_ring" || name == "nccl" || name == "pairwise" ||
      name == "direct")
    return (p - 1) * a + share * n * b;
  if (kind == CollectiveKind::all_gather && name == "recursive_doubling")
    return std::log2(p) * a + share * n * b;
  if (kind == CollectiveKind::all_gather && name == "bruck") return ceil_lg(p) * a + share * n * b;
  if (kind == CollectiveKind::reduce_scatter && name == "recursive_halving")
    return std::log2(p) * a + share * n * b;
  if (kind == CollectiveKind::all_to_all && name == "bruck") {
    if (std::has_single_bit(static_cast<unsigned>(p))) return std::log2(p) * a + n / 2 * std::log2(p) * b;
    // Other p: step k moves the blocks whose distance 1..p-1 has bit k set, popcount(i) hops for block i.
    int block_hops = 0;
    for (int i = 1; i < p; ++i) block_hops += std::popcount(static_cast<unsigned>(i));
    return ceil_lg(p) * a + block_hops * (n / p) * b;
  }
  throw std::logic_error(fmt::format("no formula written out for {} '{}'", collective_kind_name(kind), name));
}

// One call of `kind` with `algorithm` on p devices; every block (piece) is `floats` float32. Returns n in
// the kind's convention and each device's time in the collective.
struct Timed {
  double n;
  std::vector<double> seconds;
};

Timed time_call(Simulation& sim, CollectiveKind kind, const std::string& algorithm, int p,
                std::int64_t floats) {
  const CollectiveOptions options{.algorithm = algorithm};
  std::function<Array(const Array&)> collective;
  Shape shape;
  switch (kind) {
    case CollectiveKind::all_gather:
      shape = {p, floats};
      collective = [options](const Array& x) { return all_gather(x, "i", 0, false, {}, options); };
      break;
    case CollectiveKind::reduce_scatter:
      shape = {p, p, floats};
      collective = [options](const Array& x) { return psum_scatter(x, "i", 0, false, {}, options); };
      break;
    case CollectiveKind::all_to_all:
      shape = {p, p, floats};
      collective = [options](const Array& x) { return all_to_all(x, "i", 0, 0, false, {}, options); };
      break;
    default:
      throw std::logic_error("not a kind of this suite");
  }
  // Not read back: the host's read would be a call of its own in the report.
  pmap([collective](const Args& a) -> Tree { return collective(a[0].array()); }, {.axis_name = "i"})(
      sim, {Array::full(shape, 0.25)});
  Timed timed{4.0 * static_cast<double>(p * floats), {}};
  const std::string name = primitive(kind);
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const auto& times : report.calls.back().times)
    timed.seconds.push_back(times.communication.count(name) ? times.communication.at(name) : 0.0);
  return timed;
}

class Timing : public ::testing::TestWithParam<Case> {};

TEST_P(Timing, EqualsTheRegisteredCostAndTheWrittenOutFormula) {
  const CollectiveKind kind = GetParam().kind;
  const std::string& algorithm = GetParam().algorithm;
  const int p = GetParam().p;
  auto sim = alpha_beta_simulation(p);
  const std::int64_t floats = 4096;  // 16 KB blocks: alpha = 2 us and a block's beta term, 0.16 us, both show
  const Timed timed = time_call(sim, kind, algorithm, p, floats);
  const double registered = [&] {
    const CostInputs c{.p = p, .n = timed.n, .alpha = kAlpha, .beta = kBeta, .gamma = 0};
    switch (kind) {
      case CollectiveKind::all_gather:
        return find_all_gather(algorithm).cost(c);
      case CollectiveKind::reduce_scatter:
        return find_reduce_scatter(algorithm).cost(c);
      default:
        return find_all_to_all(algorithm).cost(c);
    }
  }();
  const double written_out = formula(kind, algorithm, p, timed.n);
  ASSERT_EQ(timed.seconds.size(), static_cast<std::size_t>(p));
  for (double seconds : timed.seconds) {
    expect_seconds(seconds, registered);
    expect_seconds(seconds, written_out);
  }
}

INSTANTIATE_TEST_SUITE_P(GatherScatterAllToAll, Timing, ::testing::ValuesIn(all_cases()), case_name);

// On a 4 x 4 torus of 1 us, 100 GB/s cables, `torus` (the default there) drives all four cables of a device at
// once: each of its 4 parts, n / 4, takes the ring's steps along both dimensions, 3 + 3 alpha, and moves the
// ring's ((p-1)/p) of its part, where one ring would move ((p-1)/p) n over 15 one-cable steps.
void expect_torus_time(CollectiveKind kind) {
  constexpr double alpha = 1e-6;
  topologies::TorusSpec spec{.num_devices = 16,
                             .shape = {4, 4},
                             .device = testing::free_compute_cluster(1).device,
                             .device_link = {100e9, alpha},
                             .host_link = {10e9, 1e-6}};
  Simulation sim(topologies::torus(spec), {alpha_beta_config(), {}});
  EXPECT_EQ(default_algorithm(kind, collective_library(sim.platform())), "torus");
  const Timed timed = time_call(sim, kind, "torus", 16, 4096);
  const double expected = 6 * alpha + 15.0 / 16 * (timed.n / 4) / 100e9;
  for (double seconds : timed.seconds) expect_seconds(seconds, expected);
}

TEST(TorusTiming, AllGatherDrivesEveryCableOfATorusAtOnce) { expect_torus_time(CollectiveKind::all_gather); }

// Along a mesh's line a ring closes over the other way's links, so a second way would share them: `torus` runs
// one part per dimension, one way, and on a line of 4 takes the ring's time.
TEST(TorusTiming, AlongAMeshLineIsTheRing) {
  topologies::TorusSpec spec{.num_devices = 4,
                             .shape = {4, 1},
                             .wraparound = false,
                             .device = testing::free_compute_cluster(1).device,
                             .device_link = {100e9, 1e-6},
                             .host_link = {10e9, 1e-6}};
  Simulation sim(topologies::torus(spec), {alpha_beta_config(), {}});
  const Timed torus = time_call(sim, CollectiveKind::all_gather, "torus", 4, 4096);
  const Timed ring = time_call(sim, CollectiveKind::all_gather, "ring", 4, 4096);
  for (std::size_t d = 0; d < ring.seconds.size(); ++d) expect_seconds(torus.seconds[d], ring.seconds[d]);
}

TEST(TorusTiming, ReduceScatterDrivesEveryCableOfATorusAtOnce) { expect_torus_time(CollectiveKind::reduce_scatter); }

// ---------------------------------------------------------------------------------------------------------
// (3) auto picks the lowest formula: the run takes the chosen algorithm's time.

struct AutoCase {
  CollectiveKind kind;
  int p;
  std::int64_t floats;  // per block
  std::string expected;
};

void PrintTo(const AutoCase& c, std::ostream* os) {
  *os << collective_kind_name(c.kind) << " on " << c.p << " devices, " << c.floats << " float32 per block";
}

class AutoPolicy : public ::testing::TestWithParam<AutoCase> {};

TEST_P(AutoPolicy, ChoosesTheLowestFormulaAndTakesItsTime) {
  const CollectiveKind kind = GetParam().kind;
  const int p = GetParam().p;
  const std::int64_t floats = GetParam().floats;
  const std::string& expected = GetParam().expected;
  const double n = 4.0 * static_cast<double>(p * floats);
  // The expected choice is the lowest written-out formula (the first registered on a tie).
  for (std::string_view name : algorithm_names(kind)) {
    if (!accepted(kind, name, p) || name == expected) continue;
    EXPECT_LE(formula(kind, expected, p, n), formula(kind, std::string(name), p, n)) << name;
  }
  EXPECT_EQ(collectives::choose_algorithm(kind, {.p = p, .n = n, .alpha = kAlpha, .beta = kBeta, .gamma = 0}),
            expected);
  auto sim = alpha_beta_simulation(p);
  const Timed timed = time_call(sim, kind, "auto", p, floats);
  for (double seconds : timed.seconds) expect_seconds(seconds, formula(kind, expected, p, timed.n));
}

// All-to-all on 8 devices: Bruck's 3 alpha + 1.5 n beta against pairwise's 7 alpha + 0.875 n beta; Bruck
// wins below n = 6.4 alpha / beta = 1.28 MB. The all-gather and reduce-scatter algorithms share one beta
// term, so the fewest latencies win at every size (recursive doubling over Bruck on a tie, by registry
// order; ring first among the p-1 latency ones).
INSTANTIATE_TEST_SUITE_P(
    GatherScatterAllToAll, AutoPolicy,
    ::testing::Values(AutoCase{CollectiveKind::all_to_all, 8, 1, "bruck"},
                      AutoCase{CollectiveKind::all_to_all, 8, 65536, "pairwise"},
                      AutoCase{CollectiveKind::all_gather, 8, 1, "recursive_doubling"},
                      AutoCase{CollectiveKind::all_gather, 8, 65536, "recursive_doubling"},
                      AutoCase{CollectiveKind::all_gather, 6, 1, "bruck"},
                      AutoCase{CollectiveKind::all_gather, 6, 65536, "bruck"},
                      AutoCase{CollectiveKind::reduce_scatter, 8, 1, "recursive_halving"},
                      AutoCase{CollectiveKind::reduce_scatter, 8, 65536, "recursive_halving"},
                      AutoCase{CollectiveKind::reduce_scatter, 6, 1, "ring"},
                      AutoCase{CollectiveKind::reduce_scatter, 6, 65536, "ring"}),
    [](const ::testing::TestParamInfo<AutoCase>& param) {
      return fmt::format("{}_p{}_{}floats", collective_kind_name(param.param.kind), param.param.p,
                         param.param.floats);
    });

// ---------------------------------------------------------------------------------------------------------
// (4) A device count an algorithm refuses.

TEST(DeviceCount, RecursiveDoublingAllGatherRefusesSixDevicesNamingTheCountsItTakes) {
  try {
    check_device_count(CollectiveKind::all_gather, "recursive_doubling", 6);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "all_gather algorithm 'recursive_doubling' runs on powers of two, not on 6 devices");
  }
}

TEST(DeviceCount, RecursiveHalvingReduceScatterRefusesThreeDevicesInACall) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(3)));
  auto f = pmap(
      [](const Args& a) -> Tree {
        return psum_scatter(a[0].array(), "i", 0, false, {}, {.algorithm = "recursive_halving"});
      },
      {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({3, 3, 2})});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "reduce_scatter algorithm 'recursive_halving' runs on powers of two, not on 3 devices");
  }
}

TEST(DeviceCount, RecursiveDoublingAllGatherAsTheSimulationsChoiceRefusesFiveDevicesInACall) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(5)),
                 {{}, {{CollectiveKind::all_gather, "recursive_doubling"}}});
  auto f = pmap([](const Args& a) -> Tree { return all_gather(a[0].array(), "i"); }, {.axis_name = "i"});
  try {
    f(sim, {Array::zeros({5, 2})});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "all_gather algorithm 'recursive_doubling' runs on powers of two, not on 5 devices");
  }
}

}  // namespace
}  // namespace spmdsim
