// The MLP's hand-written backward pass and the optimizers, checked three ways: against central finite
// differences in float64, against real JAX's jax.value_and_grad and optax's updates (the committed fixtures
// of tests/reference/make_model_fixtures.py), and inside pmap, where every op is charged to the device and
// abstract arrays cost exactly what real ones do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/models/optimizers.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------
// Helpers

Array random_normal(Shape shape, std::mt19937& gen, DType dtype, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (auto& v : values) v = normal(gen) * scale;
  return Array::from_values(std::move(shape), values, dtype);
}

// Labels for a loss: targets for mse, int32 labels or one-hot rows for cross-entropy.
enum class Labels { none, onehot, integer };

Array make_targets(Loss loss, Labels labels, std::int64_t batch, std::int64_t classes, std::mt19937& gen,
                   DType dtype) {
  if (loss == Loss::mse) return random_normal({batch, classes}, gen, dtype);
  std::uniform_int_distribution<std::int64_t> pick(0, classes - 1);
  std::vector<double> ints, onehot(static_cast<std::size_t>(batch * classes), 0.0);
  for (std::int64_t i = 0; i < batch; ++i) {
    const auto c = pick(gen);
    ints.push_back(static_cast<double>(c));
    onehot[static_cast<std::size_t>(i * classes + c)] = 1.0;
  }
  if (labels == Labels::integer) return Array::from_values({batch}, ints, DType::i32);
  return Array::from_values({batch, classes}, onehot, dtype);
}

// Largest |a - b| - (atol + rtol |b|) over two trees of one structure (<= 0 means allclose).
double worst_excess(const Tree& a, const Tree& b, double rtol, double atol, double* max_abs_error = nullptr) {
  const auto la = a.leaves();
  const auto lb = b.leaves();
  EXPECT_EQ(la.size(), lb.size());
  double worst = -1;
  for (std::size_t i = 0; i < la.size() && i < lb.size(); ++i) {
    EXPECT_EQ(la[i].shape(), lb[i].shape());
    const auto va = la[i].to_doubles();
    const auto vb = lb[i].to_doubles();
    for (std::size_t j = 0; j < va.size() && j < vb.size(); ++j) {
      const double error = std::abs(va[j] - vb[j]);
      if (max_abs_error) *max_abs_error = std::max(*max_abs_error, error);
      worst = std::max(worst, error - (atol + rtol * std::abs(vb[j])));
    }
  }
  return worst;
}

// params with element `index` of leaf `leaf` moved by delta (float64).
Tree perturbed(const Tree& params, std::size_t leaf, std::size_t index, double delta) {
  auto leaves = params.leaves();
  auto values = leaves[leaf].to_doubles();
  values[index] += delta;
  leaves[leaf] = Array::from_values(leaves[leaf].shape(), values, leaves[leaf].dtype());
  return params.rebuild(leaves);
}

// ---------------------------------------------------------------------------------------------------------
// Finite differences (float64)

struct GradCase {
  Activation activation;
  Loss loss;
  Labels labels;
};

std::string grad_case_name(const GradCase& c) {
  std::string name = std::string(activation_name(c.activation)) + "_" + std::string(loss_name(c.loss));
  if (c.labels == Labels::onehot) name += "_onehot";
  if (c.labels == Labels::integer) name += "_int";
  return name;
}

const std::vector<GradCase> kGradCases = {
    {Activation::tanh, Loss::mse, Labels::none},
    {Activation::tanh, Loss::softmax_cross_entropy, Labels::onehot},
    {Activation::tanh, Loss::softmax_cross_entropy, Labels::integer},
    {Activation::relu, Loss::mse, Labels::none},
    {Activation::relu, Loss::softmax_cross_entropy, Labels::onehot},
    {Activation::relu, Loss::softmax_cross_entropy, Labels::integer},
};

class FiniteDifferences : public ::testing::TestWithParam<GradCase> {};

// Central differences with h = 1e-5 in float64 have a truncation error of order h^2 |f'''| ~ 1e-10 and a
// rounding error of order eps |f| / h ~ 1e-11; 1e-8 + 1e-6 |g| leaves a margin of 100 over both. (A relu
// kink within h of a pre-activation would break the comparison; with these random inputs none is.)
TEST_P(FiniteDifferences, GradientsMatchCentralDifferencesInFloat64) {
  const GradCase c = GetParam();
  const Mlp mlp({5, 7, 6, 3}, c.activation, c.loss);
  std::mt19937 gen(11);
  Tree params = mlp.init(3, DType::f64);
  // Non-zero biases, so that every parameter's gradient is exercised with general values.
  params = params.map([&](const Array& leaf) {
    return leaf.ndim() == 1 ? random_normal(leaf.shape(), gen, DType::f64, 0.1) : leaf;
  });
  const Array x = random_normal({4, 5}, gen, DType::f64);
  const Array y = make_targets(c.loss, c.labels, 4, 3, gen, DType::f64);

  const LossAndGrads analytic = mlp.value_and_grad(params, x, y);
  EXPECT_EQ(analytic.loss.dtype(), DType::f64);
  EXPECT_EQ(analytic.loss.item(0), mlp.loss(params, x, y).item(0));
  ASSERT_TRUE(analytic.grads.same_structure(params)) << analytic.grads.treedef();

  constexpr double h = 1e-5;
  const auto leaves = params.leaves();
  auto numeric = analytic.grads.leaves();
  for (std::size_t leaf = 0; leaf < leaves.size(); ++leaf) {
    std::vector<double> values;
    for (std::int64_t i = 0; i < leaves[leaf].size(); ++i) {
      const auto index = static_cast<std::size_t>(i);
      const double plus = mlp.loss(perturbed(params, leaf, index, h), x, y).item(0);
      const double minus = mlp.loss(perturbed(params, leaf, index, -h), x, y).item(0);
      values.push_back((plus - minus) / (2 * h));
    }
    numeric[leaf] = Array::from_values(leaves[leaf].shape(), values, DType::f64);
  }
  double max_error = 0;
  EXPECT_LE(worst_excess(analytic.grads, params.rebuild(numeric), 1e-6, 1e-8, &max_error), 0.0)
      << "largest |analytic - numeric| = " << max_error;
  RecordProperty("max_abs_error", std::to_string(max_error));
}

INSTANTIATE_TEST_SUITE_P(Mlp, FiniteDifferences, ::testing::ValuesIn(kGradCases),
                         [](const auto& test_info) { return grad_case_name(test_info.param); });

// ---------------------------------------------------------------------------------------------------------
// Real JAX and optax (fixtures)

std::filesystem::path model_fixture_dir() {
  return std::filesystem::path(SPMDSIM_FIXTURE_DIR).parent_path() / "fixtures_models";
}

json read_fixture(const std::string& name) {
  const auto path = model_fixture_dir() / (name + ".json");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return json::parse(in);
}

Array array_from(const json& node) {
  const DType dtype = parse_dtype(node.at("dtype").get<std::string>());
  return Array::from_values(node.at("shape").get<Shape>(), node.at("data").get<std::vector<double>>(), dtype);
}

Tree params_from(const json& node) {
  std::vector<Tree> layers;
  for (const auto& layer : node) layers.push_back(Tree::dict({{"b", array_from(layer.at("b"))}, {"w", array_from(layer.at("w"))}}));
  return Tree::list(std::move(layers));
}

Mlp mlp_from(const json& fixture) {
  return Mlp(fixture.at("layer_sizes").get<std::vector<std::int64_t>>(),
             fixture.at("activation") == "tanh" ? Activation::tanh : Activation::relu,
             fixture.at("loss") == "mse" ? Loss::mse : Loss::softmax_cross_entropy);
}

// XLA and spmdsim sum in different orders. Every value here is a float32 computation of depth ~10 whose
// reductions are at most 16 long (layers [8, 16, 12, 4], batch 6): a relative error bound of about
// 200 u = 1.2e-5 on the magnitude of the summed terms. rtol 1e-5 with atol 1e-6 (for gradients that cancel
// to near zero) holds that; the measured differences are around 1e-7.
constexpr double kJaxRtol = 1e-5;
constexpr double kJaxAtol = 1e-6;

class JaxGradients : public ::testing::TestWithParam<GradCase> {};

TEST_P(JaxGradients, LossAndGradsMatchJaxValueAndGrad) {
  const json fixture = read_fixture("grad_" + grad_case_name(GetParam()));
  ASSERT_EQ(fixture.at("jax_version"), "0.5.2");
  const Mlp mlp = mlp_from(fixture);
  const Tree params = params_from(fixture.at("params"));
  const LossAndGrads ours = mlp.value_and_grad(params, array_from(fixture.at("x")), array_from(fixture.at("y")));
  const double expected_loss = fixture.at("loss_value").get<double>();
  EXPECT_NEAR(ours.loss.item(0), expected_loss, kJaxAtol + kJaxRtol * std::abs(expected_loss));
  double max_error = 0;
  EXPECT_LE(worst_excess(ours.grads, params_from(fixture.at("grads")), kJaxRtol, kJaxAtol, &max_error), 0.0)
      << "largest |spmdsim - jax| = " << max_error;
  RecordProperty("max_abs_error", std::to_string(max_error));
  RecordProperty("loss_error", std::to_string(std::abs(ours.loss.item(0) - expected_loss)));
}

INSTANTIATE_TEST_SUITE_P(Mlp, JaxGradients, ::testing::ValuesIn(kGradCases),
                         [](const auto& test_info) { return grad_case_name(test_info.param); });

class OptaxTraining : public ::testing::TestWithParam<std::string> {};

// Three steps of optimizer + MLP on one batch, against optax. The tolerance is the gradients' (the update
// formulas are optax's, operand order included; Adam's b^t is exp(t log b) here, within an ulp of XLA's pow).
TEST_P(OptaxTraining, ThreeStepsMatchOptax) {
  const json fixture = read_fixture("train_" + GetParam());
  const Mlp mlp = mlp_from(fixture);
  const double lr = fixture.at("learning_rate").get<double>();
  const Optimizer optimizer = GetParam() == "sgd"        ? Optimizer::sgd(lr)
                              : GetParam() == "momentum" ? Optimizer::momentum(lr, 0.9)
                                                         : Optimizer::adam(lr);
  Tree params = params_from(fixture.at("params"));
  Tree state = optimizer.init(params);
  const Array x = array_from(fixture.at("x"));
  const Array y = array_from(fixture.at("y"));
  const auto losses = fixture.at("losses").get<std::vector<double>>();
  for (std::size_t step = 0; step < losses.size(); ++step) {
    const LossAndGrads lg = mlp.value_and_grad(params, x, y);
    EXPECT_NEAR(lg.loss.item(0), losses[step], kJaxAtol + kJaxRtol * std::abs(losses[step])) << "step " << step;
    OptimizerStep next = optimizer.update(lg.grads, state, params);
    params = next.params;
    state = next.state;
  }
  if (optimizer.kind() == Optimizer::Kind::adam) {
    EXPECT_EQ(state["count"].leaf().item(0), 3.0);
  }
  double max_error = 0;
  EXPECT_LE(worst_excess(params, params_from(fixture.at("final_params")), kJaxRtol, kJaxAtol, &max_error), 0.0)
      << "largest |spmdsim - optax| = " << max_error;
  RecordProperty("max_abs_error", std::to_string(max_error));
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptaxTraining, ::testing::Values("sgd", "momentum", "adam"),
                         [](const auto& test_info) { return test_info.param; });

// ---------------------------------------------------------------------------------------------------------
// Init, shapes, errors

TEST(MlpInit, FixedSeedGivesTheSameWeightsAndBiasesAreZero) {
  const Mlp mlp({784, 256, 128, 10});
  EXPECT_EQ(mlp.num_parameters(), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  const Tree a = mlp.init(0);
  const Tree b = mlp.init(0);
  const Tree c = mlp.init(1);
  EXPECT_EQ(a.treedef(), "PyTreeDef([{'b': *, 'w': *}, {'b': *, 'w': *}, {'b': *, 'w': *}])");
  for (std::size_t i = 0; i < a.leaves().size(); ++i) EXPECT_TRUE(array_equal(a.leaves()[i], b.leaves()[i]));
  EXPECT_FALSE(array_equal(a[0]["w"].leaf(), c[0]["w"].leaf()));
  EXPECT_EQ(a[0]["w"].leaf().shape(), (Shape{784, 256}));
  EXPECT_EQ(a[2]["b"].leaf().shape(), (Shape{10}));
  EXPECT_TRUE(array_equal(a[1]["b"].leaf(), Array::zeros({128})));
  // normal * 0.1: the sample standard deviation of 200k draws is 0.1 to within 1%.
  const auto w = a[0]["w"].leaf().to_doubles();
  double sq = 0;
  for (double v : w) sq += v * v;
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(w.size())), 0.1, 1e-3);
  const Tree abstract = mlp.init_abstract(DType::bf16);
  EXPECT_TRUE(abstract[0]["w"].leaf().is_abstract());
  EXPECT_EQ(abstract[0]["w"].leaf().dtype(), DType::bf16);
}

TEST(MlpErrors, BadShapesAndLabelsAreValueErrors) {
  const Mlp mlp({4, 3, 2}, Activation::tanh, Loss::softmax_cross_entropy);
  const Tree params = mlp.init(0);
  const Array x = Array::zeros({5, 4});
  try {
    mlp.value_and_grad(params, Array::zeros({5, 3}), Array::zeros({5, 2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "MLP input: expected shape (batch, 4), got (5, 3)");
  }
  try {
    mlp.value_and_grad(params, x, Array::zeros({5, 3}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "softmax cross-entropy: labels must be int32 of shape (5,) or one-hot floats of shape (5, 2), got "
                 "float32(5, 3)");
  }
  try {
    mlp.value_and_grad(Mlp({4, 2}).init(0), x, Array::zeros({5, 2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "MLP params: expected a list of 2 layer dicts, got PyTreeDef([{'b': *, 'w': *}])");
  }
  EXPECT_THROW(Mlp({4}), ValueError);
}

TEST(MlpLosses, IntegerLabelsAndOneHotLabelsGiveTheSameLossAndGrads) {
  const Mlp mlp({6, 5, 4}, Activation::relu, Loss::softmax_cross_entropy);
  const Tree params = mlp.init(7);
  std::mt19937 gen(5);
  const Array x = random_normal({3, 6}, gen, DType::f32);
  const Array labels = Array::from_values({3}, {2, 0, 3}, DType::i32);
  Array onehot = Array::from_values({3, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  const LossAndGrads a = mlp.value_and_grad(params, x, labels);
  const LossAndGrads b = mlp.value_and_grad(params, x, onehot);
  EXPECT_EQ(a.loss.item(0), b.loss.item(0));
  EXPECT_LE(worst_excess(a.grads, b.grads, 0, 0), 0.0);  // bit-identical: the one-hot rows are exact
}

// ---------------------------------------------------------------------------------------------------------
// On a device

// The last pmap call of that name (device_get adds transfer phases to the report's calls).
CallReport last_call(const Simulation& sim, const std::string& name) {
  const auto calls = sim.report().calls;
  auto it = std::find_if(calls.rbegin(), calls.rend(), [&](const CallReport& c) { return c.name == name; });
  if (it == calls.rend()) throw std::runtime_error("no call named " + name);
  return *it;
}

// value_and_grad inside pmap on one device: the same bits as on the host, every op charged as compute, the
// gradients and saved activations tagged; an abstract run takes the same time and memory.
TEST(MlpOnDevice, ComputesTheHostValuesChargesEveryOpAndCostsTheSameAbstract) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)));
  const Mlp mlp({32, 16, 8, 4}, Activation::tanh, Loss::softmax_cross_entropy);
  const Tree params = mlp.init(1);
  std::mt19937 gen(2);
  const Array x = random_normal({1, 12, 32}, gen, DType::f32);
  const Array y = Array::from_values({1, 12}, {0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0}, DType::i32);
  MemoryByTag at_end;
  auto f = pmap(
      [&](const Args& a) -> Tree {
        LossAndGrads lg =
            mlp.value_and_grad(tag_as(a[0].tree(), tags::parameters), a[1].array(), a[2].array());
        at_end = live_memory();
        return Tree::tuple({lg.loss, lg.grads});
      },
      {.in_axes = Axes::tuple({none, 0, 0}), .out_axes = Axes(none), .name = "value_and_grad"});
  {
    const Tree device = sim.device_get(f(sim, {params, x, y}));
    const LossAndGrads host = mlp.value_and_grad(params, take(x, 0, 0), take(y, 0, 0));
    EXPECT_EQ(device[0].leaf().item(0), host.loss.item(0));
    EXPECT_LE(worst_excess(device[1], host.grads, 0, 0), 0.0);
  }  // the results' device buffers go, so that the abstract call below starts from the same empty memory
  // At the end of the pass the gradients are live and tagged, the activations released.
  const double psi_bytes = static_cast<double>(mlp.num_parameters()) * 4;
  EXPECT_EQ(at_end[tags::gradients], psi_bytes);
  EXPECT_EQ(at_end[tags::parameters], psi_bytes);
  EXPECT_EQ(at_end[tags::activations], 0);

  const CallReport real = last_call(sim, "value_and_grad");
  EXPECT_GT(real.times[0].compute, 0);
  // Forward and backward spans: 3 matmuls forward, 5 backward (no input gradient for layer 0).
  const auto& spans = real.spans[0];
  EXPECT_EQ(std::count_if(spans.begin(), spans.end(), [](const Span& s) { return s.name == "matmul"; }), 3 + 5);
  EXPECT_GT(
      real.memory[0].at_peak[tags::activations.index()] + real.memory[0].at_peak[tags::gradients.index()], 0);

  f(sim, {mlp.init_abstract(), Array::abstract({1, 12, 32}), Array::abstract({1, 12}, DType::i32)});
  const CallReport abstract = last_call(sim, "value_and_grad");
  EXPECT_DOUBLE_EQ(abstract.times[0].compute, real.times[0].compute);
  EXPECT_EQ(abstract.memory[0].peak, real.memory[0].peak);
  EXPECT_EQ(abstract.memory[0].at_peak, real.memory[0].at_peak);
}

}  // namespace
}  // namespace spmdsim::models
