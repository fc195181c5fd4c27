// The all-reduce, broadcast and reduce algorithms: every registered all-reduce gives psum's sum (within a
// float32 bound) and pmax's maximum (exactly) on 1..16 devices; under SimGrid's pinned alpha-beta model
// its simulated time equals its registered closed form and, for the classic ones, the formula as the
// papers write it; "auto" picks the expected algorithm; the logical trees and groups are pure functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/algorithms.hpp"
#include "collectives/selection.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/topologies/ring.hpp"
#include "spmdsim/topologies/torus.hpp"
#include "collective_time.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using testing::collective_time;

// The free-compute test cluster: alpha = two 1 us fabric links, beta = 1 / 100 GB/s, gamma = 0.
constexpr double kAlpha = 2e-6;
constexpr double kBeta = 1.0 / 100e9;
// float32 elements per device in the timing tests: divisible by every p, power-of-two core and 2k below,
// so that every piece of every algorithm has the same size.
constexpr std::int64_t kTimingFloats = 3 * 5 * 7 * 16 * 1024;

PlatformBuilder switch_platform(int p) {
  return topologies::switch_cluster(testing::free_compute_cluster(p));
}

// The switch cluster with a logical shape: its builder cannot express one, so the test sets it on the
// Platform the builder returns.
PlatformBuilder switch_platform_with_dimensions(int p, std::vector<int> dimensions) {
  return [builder = switch_platform(p), dimensions] {
    Platform platform = builder();
    platform.dimensions = dimensions;
    return platform;
  };
}

Simulation alpha_beta_simulation(const PlatformBuilder& builder) {
  return Simulation(builder, {alpha_beta_config(), {}});
}

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected))
      << "actual " << actual << " expected " << expected;
}

CostInputs switch_cost(int p, double bytes) {
  return {.p = p, .n = bytes, .alpha = kAlpha, .beta = kBeta};
}

// One collective on every device: f(x_i) with x_i row i of x; returns the stacked outputs.
Tree run_on_rows(Simulation& sim, const Array& x, std::function<Array(const Array&)> f) {
  auto g = pmap([f](const Args& a) -> Tree { return f(a[0].array()); }, {.axis_name = "i"});
  return g(sim, {x});
}

double psum_time(Simulation& sim, int p, std::int64_t floats, const CollectiveOptions& options) {
  run_on_rows(sim, Array::abstract({p, floats}),
              [&](const Array& row) { return psum(row, "i", {}, options); });
  return collective_time(sim, "psum");
}

// Uniform(-1, 1) float32 values, reproducible.
Array random_rows(int p, std::int64_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(p * n));
  for (auto& v : values) v = uniform(engine);
  return Array::from_values({p, n}, values, DType::f32);
}

struct Case {
  std::string algorithm;
  int p;
};

std::string case_name(const ::testing::TestParamInfo<Case>& test) {
  return fmt::format("{}_p{}", test.param.algorithm, test.param.p);
}

// The registered algorithms that run on the test cluster: all but those bound to a platform (nvls and
// nvls_tree, tests/nvls_test.cpp; nccl_tree, tests/nccl_tree_test.cpp).
template <class AlgorithmT>
std::vector<Case> cases_of(std::span<const AlgorithmT> table, std::initializer_list<int> counts) {
  std::vector<Case> cases;
  for (const auto& algorithm : table)
    for (int p : counts)
      if (algorithm.accepts(p) && !algorithm.platform_bound)
        cases.push_back({std::string(algorithm.name), p});
  return cases;
}

constexpr std::initializer_list<int> kCounts = {1, 2, 3, 4, 5, 6, 7, 8, 16};

// ---------------------------------------------------------------------------------------------------------
// (1) Correctness of every registered all-reduce.

class AllReduceCorrectness : public ::testing::TestWithParam<Case> {};

// psum against the float64 sum in fixed order: p-1 float32 additions in any order are within
// (p-1) u sum|x_i| of it (u = 2^-24, first order), so the test allows p u sum|x_i| per element. pmax is
// exact. Sizes: 1 element (pieces of size 0 when p > 1), 13 (uneven pieces) and 1000.
TEST_P(AllReduceCorrectness, PsumWithinTheFloat32BoundAndPmaxExact) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const CollectiveOptions options{.algorithm = algorithm};
  const double u = std::ldexp(1.0, -24);
  double worst_error = 0, worst_ratio = 0;
  for (std::int64_t n : {1, 13, 1000}) {
    const Array x = random_rows(p, n, static_cast<unsigned>(1000 * p + n));
    const auto values = x.to_doubles();
    const Tree sums =
        sim.device_get(run_on_rows(sim, x, [&](const Array& row) { return psum(row, "i", {}, options); }));
    const Tree maxima =
        sim.device_get(run_on_rows(sim, x, [&](const Array& row) { return pmax(row, "i", {}, options); }));
    const auto got_sum = sums.leaf().to_doubles();
    const auto got_max = maxima.leaf().to_doubles();
    ASSERT_EQ(sums.leaf().shape(), (Shape{p, n}));
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0, maximum = -INFINITY;
      for (int i = 0; i < p; ++i) {
        const double v = values[static_cast<std::size_t>(i * n + j)];
        exact += v;
        magnitude += std::abs(v);
        maximum = std::max(maximum, v);
      }
      const double bound = p * u * magnitude;
      for (int d = 0; d < p; ++d) {
        const double got = got_sum[static_cast<std::size_t>(d * n + j)];
        EXPECT_LE(std::abs(got - exact), bound) << "device " << d << " element " << j << " of " << n;
        // Every device holds the same value, as psum's result is one replicated array.
        EXPECT_EQ(got, got_sum[static_cast<std::size_t>(j)]) << "device " << d << " element " << j;
        EXPECT_EQ(got_max[static_cast<std::size_t>(d * n + j)], maximum)
            << "device " << d << " element " << j;
        worst_error = std::max(worst_error, std::abs(got - exact));
        if (bound > 0) worst_ratio = std::max(worst_ratio, std::abs(got - exact) / bound);
      }
    }
  }
  RecordProperty("largest_deviation", fmt::format("{:.3g}", worst_error));
  RecordProperty("largest_deviation_over_bound", fmt::format("{:.3g}", worst_ratio));
  std::cout << fmt::format(
      "[ deviation] {} on {} devices: largest |psum - float64 sum| = {:.3g} ({:.3g} of the bound)\n",
      algorithm, p, worst_error, worst_ratio);
}

// Abstract arrays (shapes only) run every algorithm and cost exactly what real ones cost.
TEST_P(AllReduceCorrectness, AbstractArraysCostExactlyAsRealOnes) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const CollectiveOptions options{.algorithm = algorithm};
  const std::int64_t n = 3 * 5 * 7 * 16;
  run_on_rows(sim, random_rows(p, n, 7), [&](const Array& row) { return psum(row, "i", {}, options); });
  const double real = collective_time(sim, "psum");
  Tree out = run_on_rows(sim, Array::abstract({p, n}),
                         [&](const Array& row) { return psum(row, "i", {}, options); });
  EXPECT_TRUE(out.leaf().is_abstract());
  EXPECT_EQ(out.leaf().shape(), (Shape{p, n}));
  expect_seconds(collective_time(sim, "psum"), real);
}

INSTANTIATE_TEST_SUITE_P(Registered, AllReduceCorrectness,
                         ::testing::ValuesIn(cases_of(all_reduce_algorithms(), kCounts)), case_name);

// ---------------------------------------------------------------------------------------------------------
// (2) Simulated time equals the closed form exactly under the pinned alpha-beta model.

// Where each registered formula is exact (the algorithm's file says why); elsewhere it is an estimate.
bool formula_is_exact(std::string_view algorithm, int p) {
  if (algorithm == "double_binary_tree") return power_of_two(p);
  return true;
}

class AllReduceTime : public ::testing::TestWithParam<Case> {};

TEST_P(AllReduceTime, EqualsTheRegisteredFormula) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const double n = kTimingFloats * 4.0;
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = algorithm}),
                 find_all_reduce(algorithm).cost(switch_cost(p, n)));
}

std::vector<Case> exact_cases() {
  std::vector<Case> cases;
  for (const auto& c : cases_of(all_reduce_algorithms(), kCounts))
    if (formula_is_exact(c.algorithm, c.p)) cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Registered, AllReduceTime, ::testing::ValuesIn(exact_cases()), case_name);

// The formulas as the sources write them (REFERENCES.md §3), independently of the registered code.
double paper_formula(std::string_view algorithm, int p, double n) {
  const double lg = std::log2(p);
  const double share = (p - 1.0) / p;
  if (algorithm == "ring") return 2 * (p - 1) * kAlpha + 2 * share * n * kBeta;  // Thakur et al. 2005 §5.3
  if (algorithm == "recursive_doubling") return lg * kAlpha + n * lg * kBeta;    // MPICH, [P-T05]
  if (algorithm == "rabenseifner") return 2 * lg * kAlpha + 2 * share * n * kBeta;
  if (algorithm == "binomial") return 2 * std::ceil(lg) * kAlpha + 2 * std::ceil(lg) * n * kBeta;  // §3.2
  if (algorithm == "direct") return 2 * (p - 1) * kAlpha + 2 * share * n * kBeta;                  // §3.2
  throw std::logic_error("no paper formula");
}

class PaperFormula : public ::testing::TestWithParam<Case> {};

TEST_P(PaperFormula, SimulatedTimeEqualsIt) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = algorithm}),
                 paper_formula(algorithm, p, kTimingFloats * 4.0));
}

std::vector<Case> paper_cases() {
  std::vector<Case> cases;
  for (std::string algorithm : {"ring", "recursive_doubling", "rabenseifner", "binomial", "direct"})
    for (int p : {2, 4, 8, 16}) cases.push_back({algorithm, p});
  for (int p : {3, 5, 7}) cases.push_back({"ring", p});
  for (int p : {3, 5, 7}) cases.push_back({"direct", p});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(PowersOfTwo, PaperFormula, ::testing::ValuesIn(paper_cases()), case_name);

// MPICH's fold on counts that are not powers of two, written out: p' = 2^floor(lg p), one folding step and
// one unfolding step around the core.
TEST(FoldedCounts, RecursiveDoublingAndRabenseifnerAddTwoSteps) {
  for (const char* algorithm : {"recursive_doubling", "rabenseifner"}) {
    for (int p : {3, 5, 6, 7}) {
      const double n = kTimingFloats * 4.0;
      const int lg = p < 4 ? 1 : 2;  // floor(lg p)
      const double core = 1 << lg;
      const double expected = std::string(algorithm) == "recursive_doubling"
                                  ? (lg + 2) * (kAlpha + n * kBeta)
                                  : (2 * lg + 2) * kAlpha + (2 + 2 * (core - 1) / core) * n * kBeta;
      EXPECT_DOUBLE_EQ(find_all_reduce(algorithm).cost(switch_cost(p, n)), expected)
          << algorithm << " p " << p;
    }
  }
}

// The double binary tree with k pieces per half: the derived formula of double_binary_tree_all_reduce.cpp,
// registered and written out.
class DoubleBinaryTreeTime : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(DoubleBinaryTreeTime, EqualsTheDerivedFormula) {
  const auto [p, k] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const double n = kTimingFloats * 4.0;
  const double simulated =
      psum_time(sim, p, kTimingFloats, {.algorithm = "double_binary_tree", .pipeline_chunks = k});
  const double slot = kAlpha + n / (2 * k) * kBeta;
  const int m = static_cast<int>(std::log2(p));
  const double written_out = p == 2 ? 2 * k * slot : 2 * (2 * (k + m) - 3) * slot;
  expect_seconds(simulated, written_out);
  expect_seconds(simulated, collectives::double_binary_tree_all_reduce_cost(switch_cost(p, n), k));
}

INSTANTIATE_TEST_SUITE_P(PowersOfTwo, DoubleBinaryTreeTime,
                         ::testing::Values(std::pair{2, 1}, std::pair{2, 3}, std::pair{4, 1}, std::pair{4, 2},
                                           std::pair{8, 1}, std::pair{8, 4}, std::pair{16, 2},
                                           std::pair{16, 5}),
                         [](const auto& test) {
                           return fmt::format("p{}_k{}", test.param.first, test.param.second);
                         });

// With reductions that take time (the round-numbers cluster: float32 adds are memory-bound at 100 GB/s,
// three bytes moved per byte reduced, gamma = 3e-11 s/byte), the gamma terms of the formulas hold too, after
// the collective kernel's launch on that device.
class GammaTerm : public ::testing::TestWithParam<Case> {};

TEST_P(GammaTerm, ReductionsOnTheCriticalPathCostGamma) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  CostInputs c = switch_cost(p, kTimingFloats * 4.0);
  c.gamma = 3.0 / 100e9;
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = algorithm}),
                 testing::kRoundNumbersLaunch + find_all_reduce(algorithm).cost(c));
}

std::vector<Case> gamma_cases() {
  std::vector<Case> cases;
  for (const auto& c : cases_of(all_reduce_algorithms(), {2, 6, 8, 16}))
    if (formula_is_exact(c.algorithm, c.p)) cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Registered, GammaTerm, ::testing::ValuesIn(gamma_cases()), case_name);

// Hierarchical and multidim on a switch cluster given a logical shape.
struct ShapedCase {
  std::vector<int> dimensions;
  std::string algorithm;
};

class ShapedAllReduce : public ::testing::TestWithParam<ShapedCase> {};

TEST_P(ShapedAllReduce, TimeEqualsTheFormulaOfTheShapeAndTheSumIsRight) {
  const auto& [dimensions, algorithm] = GetParam();
  int p = 1;
  for (int d : dimensions) p *= d;
  auto sim = alpha_beta_simulation(switch_platform_with_dimensions(p, dimensions));
  const double n = kTimingFloats * 4.0;
  const double simulated = psum_time(sim, p, kTimingFloats, {.algorithm = algorithm});
  const double share = (p - 1.0) / p;
  double written_out = 2 * share * n * kBeta;
  if (algorithm == "hierarchical") {
    written_out += 2 * (dimensions[0] - 1) * kAlpha + 2 * (p / dimensions[0] - 1) * kAlpha;
    expect_seconds(simulated, collectives::hierarchical_all_reduce_cost(switch_cost(p, n), dimensions));
  } else {
    for (int d : dimensions) written_out += 2 * (d - 1) * kAlpha;
    expect_seconds(simulated, collectives::multidim_all_reduce_cost(switch_cost(p, n), dimensions, {}));
  }
  expect_seconds(simulated, written_out);

  const Array x = random_rows(p, 37, 11);
  const Tree sums = sim.device_get(
      run_on_rows(sim, x, [&, algorithm = algorithm](const Array& row) {  // clang 14 captures no binding
        return psum(row, "i", {}, {.algorithm = algorithm});
      }));
  const auto values = x.to_doubles();
  const auto got = sums.leaf().to_doubles();
  for (std::int64_t j = 0; j < 37; ++j) {
    double exact = 0, magnitude = 0;
    for (int i = 0; i < p; ++i) {
      exact += values[static_cast<std::size_t>(i * 37 + j)];
      magnitude += std::abs(values[static_cast<std::size_t>(i * 37 + j)]);
    }
    for (int d = 0; d < p; ++d)
      EXPECT_LE(std::abs(got[static_cast<std::size_t>(d * 37 + j)] - exact),
                p * std::ldexp(1.0, -24) * magnitude);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ShapedAllReduce,
    ::testing::Values(ShapedCase{{4, 2}, "hierarchical"}, ShapedCase{{2, 4}, "hierarchical"},
                      ShapedCase{{2, 2, 4}, "hierarchical"}, ShapedCase{{3, 2}, "hierarchical"},
                      ShapedCase{{4, 2}, "multidim"}, ShapedCase{{2, 2, 2}, "multidim"},
                      ShapedCase{{2, 2, 4}, "multidim"}, ShapedCase{{3, 2}, "multidim"}),
    [](const auto& test) {
      return fmt::format("{}_{}", test.param.algorithm, fmt::join(test.param.dimensions, "x"));
    });

// With one dimension (the plain switch cluster) both are the ring (the three calls run at different
// absolute times, so their durations agree up to the last bits of a double).
TEST(ShapedAllReduce, OneDimensionIsTheRing) {
  const int p = 6;
  auto sim = alpha_beta_simulation(switch_platform(p));
  const double ring = psum_time(sim, p, kTimingFloats, {.algorithm = "ring"});
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = "hierarchical"}), ring);
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = "multidim"}), ring);
}

// On a 4 x 4 torus of 100 GB/s, 1 us cables (free compute) the torus all-reduce cuts the vector into 4 parts
// whose rings, at every phase, run along the 4 (dimension, way) pairs: each part takes multidim's ring time
// on n / 4, 12 alpha + 30 (n / 4) / 16 beta, and no two share a cable, so the whole takes that, where the
// ring on the same torus moves all of n over one cable per device. It is the default all-reduce there.
TEST(TorusAllReduce, DrivesEveryCableOfATorusAtOnce) {
  constexpr double alpha = 1e-6, beta = 1.0 / 100e9;
  topologies::TorusSpec spec{.num_devices = 16,
                             .shape = {4, 4},
                             .device = testing::free_compute_cluster(1).device,
                             .device_link = {100e9, alpha},
                             .host_link = {10e9, 1e-6}};
  auto sim = alpha_beta_simulation(topologies::torus(spec));
  EXPECT_EQ(collective_library(sim.platform()), CollectiveLibrary::torus_rings);
  EXPECT_EQ(default_algorithm(CollectiveKind::all_reduce, CollectiveLibrary::torus_rings), "torus");
  EXPECT_EQ(default_algorithm(CollectiveKind::all_gather, CollectiveLibrary::torus_rings), "torus");
  const double n = kTimingFloats * 4.0;
  expect_seconds(psum_time(sim, 16, kTimingFloats, {}), 12 * alpha + 30 * (n / 4) / 16 * beta);
}

// A group without dimensions runs its two parts as two rings, one each way.
TEST(TorusAllReduce, WithoutDimensionsIsTwoRingsOneEachWay) {
  const int p = 6;
  auto sim = alpha_beta_simulation(topologies::ring(topologies::RingSpec{
      .num_devices = p, .device = testing::free_compute_cluster(1).device, .device_link = {100e9, 1e-6},
      .host_link = {10e9, 1e-6}}));
  const double n = kTimingFloats * 4.0;
  // Each way's ring moves n / 2 in 2(p - 1) steps of one cable each.
  expect_seconds(psum_time(sim, p, kTimingFloats, {.algorithm = "torus"}),
                 2 * (p - 1) * 1e-6 + 2 * (p - 1.0) / p * (n / 2) / 100e9);
}

// One algorithm per dimension, as ASTRA-sim configures it. Shape {2, 4}: the ring along dimension 0 on the
// whole vector n, 2 (alpha + n/2 beta); halving-doubling along dimension 1 on the half left, recursive
// halving then recursive doubling, 2 (lg 4 alpha + 3/4 n/2 beta). The ring along both would take
// 8 alpha + 1.75 n beta; this takes 6 alpha + 1.75 n beta.
TEST(PerDimensionAlgorithms, ComposeTheirCostsAlongTheShape) {
  const std::vector<int> dimensions{2, 4};
  const std::vector<std::string> names{"ring", "halving_doubling"};
  auto sim = alpha_beta_simulation(switch_platform_with_dimensions(8, dimensions));
  const double n = kTimingFloats * 4.0;
  const double simulated =
      psum_time(sim, 8, kTimingFloats, {.algorithm = "multidim", .dimension_algorithms = names});
  expect_seconds(simulated, 6 * kAlpha + 1.75 * n * kBeta);
  expect_seconds(simulated, collectives::multidim_all_reduce_cost(switch_cost(8, n), dimensions, names));
  constexpr std::int64_t kWidth = 24;  // divisible by 2 x 4: halving-doubling needs equal pieces
  const Array x = random_rows(8, kWidth, 3);
  const Tree sums = sim.device_get(run_on_rows(sim, x, [&](const Array& row) {
    return psum(row, "i", {}, {.algorithm = "multidim", .dimension_algorithms = names});
  }));
  const auto values = x.to_doubles();
  for (std::int64_t j = 0; j < kWidth; ++j) {
    double exact = 0;
    for (int i = 0; i < 8; ++i) exact += values[static_cast<std::size_t>(i * kWidth + j)];
    for (int d = 0; d < 8; ++d) EXPECT_NEAR(sums.leaf().item(d * kWidth + j), exact, 1e-5) << "device " << d;
  }
}

// Set for the whole simulation: direct along dimension 0 of {4, 2}, the ring along dimension 1.
TEST(PerDimensionAlgorithms, SetPerSimulation) {
  const std::vector<int> dimensions{4, 2};
  const std::vector<std::string> names{"direct", "ring"};
  Simulation sim(switch_platform_with_dimensions(8, dimensions),
                 {.simgrid_config = alpha_beta_config(),
                  .algorithms = {{CollectiveKind::all_reduce, "multidim"}},
                  .dimension_algorithms = names});
  const double n = kTimingFloats * 4.0;
  // direct on 4 ranks: 2 (3 alpha + 3/4 n beta); ring on 2 ranks on n/4: 2 (alpha + n/8 beta).
  expect_seconds(psum_time(sim, 8, kTimingFloats, {}), 8 * kAlpha + 1.75 * n * kBeta);
}

std::string per_dimension_error(const std::vector<int>& dimensions, const std::vector<std::string>& names) {
  try {
    Simulation sim(switch_platform_with_dimensions(8, dimensions), {.dimension_algorithms = names});
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

// One Simulation per process, so one bad choice per test.
TEST(PerDimensionAlgorithms, AnUnknownNameListsTheValidOnes) {
  EXPECT_EQ(per_dimension_error({4, 2}, {"ring", "tree"}),
            "unknown dimension algorithm 'tree'; valid: ring, direct, halving_doubling");
}

TEST(PerDimensionAlgorithms, OneNamePerDimension) {
  EXPECT_EQ(per_dimension_error({4, 2}, {"ring"}),
            "multidim over dimensions {4, 2} needs 2 dimension algorithms, got 1 (ring)");
}

// The ValueError of a multidim psum of `floats` per device with these dimension algorithms, or "".
std::string multidim_call_error(const std::vector<int>& dimensions, std::int64_t floats,
                                const std::vector<std::string>& names) {
  int p = 1;
  for (int d : dimensions) p *= d;
  auto sim = alpha_beta_simulation(switch_platform_with_dimensions(p, dimensions));
  try {
    psum_time(sim, p, floats, {.algorithm = "multidim", .dimension_algorithms = names});
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(PerDimensionAlgorithms, PiecesMustDivideForAllGathersOtherThanTheRing) {
  EXPECT_EQ(multidim_call_error({2, 4}, 10, {"ring", "direct"}),
            "multidim: 'direct' along dimension 1 needs its piece of 5 elements divisible by 4 (only the ring "
            "all-gather takes pieces of different sizes)");
}

TEST(PerDimensionAlgorithms, AnAlgorithmRefusingAnExtentSaysWhich) {
  EXPECT_EQ(multidim_call_error({3, 2}, 6, {"halving_doubling", "ring"}),
            "dimension algorithm 'halving_doubling' runs on powers of two, not on dimension 0 of extent 3");
}

// ---------------------------------------------------------------------------------------------------------
// (3) The auto policy on 8 devices.

TEST(AutoPolicy, PicksRecursiveDoublingForTinyMessagesAndRabenseifnerForLargeOnes) {
  EXPECT_EQ(collectives::choose_algorithm(CollectiveKind::all_reduce, switch_cost(8, 4)),
            "recursive_doubling");
  EXPECT_EQ(collectives::choose_algorithm(CollectiveKind::all_reduce, switch_cost(8, 256e6)), "rabenseifner");

  // End to end: the time of psum under "auto" is the time of the algorithm it should pick.
  auto sim = alpha_beta_simulation(switch_platform(8));
  expect_seconds(psum_time(sim, 8, 1, {.algorithm = "auto"}),
                 find_all_reduce("recursive_doubling").cost(switch_cost(8, 4)));
  expect_seconds(psum_time(sim, 8, 64 << 20, {.algorithm = "auto"}),
                 find_all_reduce("rabenseifner").cost(switch_cost(8, 4.0 * (64 << 20))));
}

// ---------------------------------------------------------------------------------------------------------
// (4) Device counts.

// Every all-reduce, broadcast and reduce algorithm runs on any count (MPICH's fold for the power-of-two
// ones); a registered algorithm of any kind that refuses a count says which counts it accepts.
TEST(DeviceCounts, AlgorithmsThatRefuseNameTheAcceptedCounts) {
  for (int p = 1; p <= 64; ++p) {
    for (const auto& a : all_reduce_algorithms()) EXPECT_TRUE(a.accepts(p)) << a.name << " p " << p;
    for (const auto& a : broadcast_algorithms()) EXPECT_TRUE(a.accepts(p)) << a.name << " p " << p;
    for (const auto& a : reduce_algorithms()) EXPECT_TRUE(a.accepts(p)) << a.name << " p " << p;
  }
  int refusals = 0;
  for (auto kind : kAllCollectiveKinds) {
    for (auto name : algorithm_names(kind)) {
      for (int p = 1; p <= 16; ++p) {
        try {
          check_device_count(kind, name, p);
        } catch (const ValueError& e) {
          ++refusals;
          const std::string prefix =
              fmt::format("{} algorithm '{}' runs on ", collective_kind_name(kind), name);
          const std::string suffix = fmt::format(", not on {} devices", p);
          const std::string message = e.what();
          EXPECT_EQ(message.substr(0, prefix.size()), prefix);
          EXPECT_GT(message.size(), prefix.size() + suffix.size()) << "no accepted counts in: " << message;
          EXPECT_EQ(message.substr(message.size() - suffix.size()), suffix);
        }
      }
    }
  }
  if (refusals == 0) GTEST_SKIP() << "no registered algorithm refuses a device count";
}

// A refusal reaches the pmapped function's caller: the first registered all-gather that refuses 3 devices.
TEST(DeviceCounts, ACallWithARefusedCountRaisesValueError) {
  std::string refusing;
  for (const auto& a : all_gather_algorithms())
    if (!a.accepts(3)) refusing = std::string(a.name);
  if (refusing.empty()) GTEST_SKIP() << "no registered all-gather refuses 3 devices";
  auto sim = alpha_beta_simulation(switch_platform(3));
  try {
    run_on_rows(sim, Array::zeros({3, 2}), [&](const Array& row) {
      return all_gather(row, "i", 0, false, {}, {.algorithm = refusing});
    });
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("all_gather algorithm '{}' runs on {}, not on 3 devices",
                                                 refusing, find_all_gather(refusing).accepted_counts));
  }
}

TEST(DeviceCounts, AnUnknownAllReduceAlgorithmListsTheRegisteredOnes) {
  try {
    check_algorithm(CollectiveKind::all_reduce, "butterfly");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("unknown all_reduce algorithm 'butterfly'; valid: {}",
                          fmt::join(algorithm_names(CollectiveKind::all_reduce), ", ")));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Broadcast and reduce through their spmdsim frontends.

class Rooted : public ::testing::TestWithParam<Case> {};

// From several roots, with 3 pipeline pieces (uneven, and empty for the 1-element message).
TEST_P(Rooted, BroadcastCopiesTheRootAndReduceSumsAtTheRoot) {
  const auto [algorithm, p] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const CollectiveOptions options{.algorithm = algorithm, .pipeline_chunks = 3};
  const double u = std::ldexp(1.0, -24);
  for (int root : std::set<int>{0, p / 2, p - 1}) {
    for (std::int64_t n : {1, 10}) {
      const Array x = random_rows(p, n, static_cast<unsigned>(root * 100 + n));
      const auto values = x.to_doubles();
      const auto copied =
          sim.device_get(
                 run_on_rows(sim, x, [&](const Array& row) { return broadcast(row, "i", root, options); }))
              .leaf()
              .to_doubles();
      const auto summed =
          sim.device_get(
                 run_on_rows(sim, x, [&](const Array& row) { return reduce(row, "i", root, options); }))
              .leaf()
              .to_doubles();
      for (std::int64_t j = 0; j < n; ++j) {
        double exact = 0, magnitude = 0;
        for (int i = 0; i < p; ++i) {
          exact += values[static_cast<std::size_t>(i * n + j)];
          magnitude += std::abs(values[static_cast<std::size_t>(i * n + j)]);
        }
        for (int d = 0; d < p; ++d) {
          const auto at = static_cast<std::size_t>(d * n + j);
          EXPECT_EQ(copied[at], values[static_cast<std::size_t>(root * n + j)])
              << "root " << root << " device " << d;
          if (d == root)
            EXPECT_LE(std::abs(summed[at] - exact), p * u * magnitude) << "root " << root;
          else
            EXPECT_EQ(summed[at], 0.0) << "root " << root << " device " << d;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Broadcast, Rooted,
                         ::testing::ValuesIn(cases_of(broadcast_algorithms(), {1, 2, 3, 5, 8})), case_name);

TEST(Rooted, ARootOutsideTheAxisIsAnIndexError) {
  auto sim = alpha_beta_simulation(switch_platform(2));
  try {
    run_on_rows(sim, Array::zeros({2, 3}), [](const Array& row) { return broadcast(row, "i", 2); });
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "broadcast root 2 out of range for axis size 2");
  }
}

// Chain broadcast and chain reduce with k pieces: (p - 1 + k - 1)(alpha + (n/k) beta).
class ChainTime : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(ChainTime, EqualsThePipelinedChainFormula) {
  const auto [p, k] = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const double n = kTimingFloats * 4.0;
  const double written_out = p == 1 ? 0.0 : (p - 1 + k - 1) * (kAlpha + n / k * kBeta);
  const CollectiveOptions options{.algorithm = "chain", .pipeline_chunks = k};
  run_on_rows(sim, Array::abstract({p, kTimingFloats}),
              [&, p = p](const Array& row) { return broadcast(row, "i", p / 2, options); });
  expect_seconds(collective_time(sim, "broadcast"), written_out);
  expect_seconds(collective_time(sim, "broadcast"), collectives::chain_broadcast_cost(switch_cost(p, n), k));
  run_on_rows(sim, Array::abstract({p, kTimingFloats}),
              [&, p = p](const Array& row) { return reduce(row, "i", p - 1, options); });
  expect_seconds(collective_time(sim, "reduce"), written_out);
  expect_seconds(collective_time(sim, "reduce"), collectives::chain_reduce_cost(switch_cost(p, n), k));
}

INSTANTIATE_TEST_SUITE_P(Counts, ChainTime,
                         ::testing::Values(std::pair{1, 1}, std::pair{2, 1}, std::pair{3, 4}, std::pair{5, 1},
                                           std::pair{5, 7}, std::pair{8, 16}),
                         [](const auto& test) {
                           return fmt::format("p{}_k{}", test.param.first, test.param.second);
                         });

// Binomial broadcast and reduce: ceil(lg p)(alpha + n beta), as the binomial all-reduce composes them.
class BinomialRootedTime : public ::testing::TestWithParam<int> {};

TEST_P(BinomialRootedTime, EqualsTheBinomialFormula) {
  const int p = GetParam();
  auto sim = alpha_beta_simulation(switch_platform(p));
  const double n = kTimingFloats * 4.0;
  const double written_out = std::ceil(std::log2(p)) * (kAlpha + n * kBeta);
  const CollectiveOptions options{.algorithm = "binomial"};
  run_on_rows(sim, Array::abstract({p, kTimingFloats}),
              [&](const Array& row) { return reduce(row, "i", 0, options); });
  expect_seconds(collective_time(sim, "reduce"), written_out);
  run_on_rows(sim, Array::abstract({p, kTimingFloats}),
              [&](const Array& row) { return broadcast(row, "i", 0, options); });
  expect_seconds(collective_time(sim, "broadcast"), written_out);
}

INSTANTIATE_TEST_SUITE_P(Counts, BinomialRootedTime, ::testing::Values(2, 3, 4, 5, 8, 16),
                         [](const auto& test) { return fmt::format("p{}", test.param); });

// ---------------------------------------------------------------------------------------------------------
// The logical structures, pure functions.

// The trees drawn in NVIDIA/nccl src/graph/trees.cc.
TEST(DoubleBinaryTree, MatchesNcclsPictures) {
  using collectives::nccl_double_binary_tree;
  // p = 14, tree 0:  0 - 8;  8 - 4, 12;  4 - 2, 6;  12 - 10, 13;  2 - 1, 3;  6 - 5, 7;  10 - 9, 11.
  const std::vector<int> parents14{-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12};
  for (int r = 0; r < 14; ++r) EXPECT_EQ(nccl_double_binary_tree(14, r)[0].parent, parents14[r]) << r;
  EXPECT_EQ(nccl_double_binary_tree(14, 12)[0].children, (std::vector<int>{10, 13}));
  // p = 12, tree 1 is the mirror image: root 11, then 3; 3 - 1, 7; 7 - 5, 9; 1 - 0, 2; ...
  const std::vector<int> mirror12{1, 3, 1, 11, 5, 7, 5, 3, 9, 7, 9, -1};
  for (int r = 0; r < 12; ++r) EXPECT_EQ(nccl_double_binary_tree(12, r)[1].parent, mirror12[r]) << r;
  // p = 13, tree 1 is the tree shifted by one rank: root 1, then 9; 9 - 5, 0; 5 - 3, 7; 0 - 11; ...
  const std::vector<int> shifted13{9, -1, 3, 5, 3, 9, 7, 5, 7, 1, 11, 0, 11};
  for (int r = 0; r < 13; ++r) EXPECT_EQ(nccl_double_binary_tree(13, r)[1].parent, shifted13[r]) << r;
}

// Both trees span all ranks, and the schedule's colouring lets no rank send two or receive two messages in
// one slot.
TEST(DoubleBinaryTree, ScheduleColouringIsProper) {
  for (int p = 2; p <= 100; ++p) {
    const auto& schedule = collectives::double_tree_schedule(p);
    EXPECT_EQ(schedule.edges.size(), static_cast<std::size_t>(2 * (p - 1))) << p;
    std::set<std::pair<int, int>> sends, receives;
    for (const auto& e : schedule.edges) {
      ASSERT_GE(e.colour, 0);
      ASSERT_LT(e.colour, schedule.colours);
      EXPECT_TRUE(sends.insert({e.child, e.colour}).second) << "p " << p << " rank " << e.child;
      EXPECT_TRUE(receives.insert({e.parent, e.colour}).second) << "p " << p << " rank " << e.parent;
    }
    EXPECT_LE(schedule.colours, 2) << p;
  }
}

TEST(DimensionGroup, RanksThatDifferInOneCoordinate) {
  using collectives::dimension_group;
  EXPECT_EQ(dimension_group({4, 2}, 5, 0), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(dimension_group({4, 2}, 5, 1), (std::vector<int>{1, 5}));
  EXPECT_EQ(dimension_group({2, 2, 2}, 6, 0), (std::vector<int>{6, 7}));
  EXPECT_EQ(dimension_group({2, 2, 2}, 6, 1), (std::vector<int>{4, 6}));
  EXPECT_EQ(dimension_group({2, 2, 2}, 6, 2), (std::vector<int>{2, 6}));
  EXPECT_EQ(dimension_group({3, 2}, 4, 1), (std::vector<int>{1, 4}));
}

TEST(PowerOfTwoFold, CoreRanksAreTheOddFoldedRanksThenTheRest) {
  collectives::PowerOfTwoFold fold{.pof2 = 4, .rem = 2};
  EXPECT_EQ(fold.rank_of(0), 1);
  EXPECT_EQ(fold.rank_of(1), 3);
  EXPECT_EQ(fold.rank_of(2), 4);
  EXPECT_EQ(fold.rank_of(3), 5);
  EXPECT_EQ(collectives::floor_log2(1), 0);
  EXPECT_EQ(collectives::floor_log2(7), 2);
  EXPECT_EQ(collectives::ceil_log2(7), 3);
  EXPECT_EQ(collectives::ceil_log2(8), 3);
}

}  // namespace
}  // namespace spmdsim
