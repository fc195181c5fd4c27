// TrainOptions::donate_state: the step takes over the old model state (pmap's donate_argnums) and releases
// each old leaf as its new one is made, as PyTorch's and DeepSpeed's in-place updates do. The update's peak
// in closed form for every strategy (the model states + what the update itself allocates, where without
// donation the new state sits beside the old), the same values with and without donation, and the old state
// deleted.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "spmdsim/errors.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/mlp.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

constexpr int kDevices = 4;

std::string strategy_test_name(const ::testing::TestParamInfo<Strategy>& info) {
  return std::string(strategy_name(info.param));
}

// ---------------------------------------------------------------------------------------------------------
// The update's peak, in closed form

// Twelve layers of 256 x 256 and a head of 16: every leaf a multiple of 4 elements (no shard is padded), and
// no leaf above a tenth of the parameters, so the update of one leaf never sets the peak.
const Mlp kManyLayers({256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 16}, Activation::relu,
                      Loss::softmax_cross_entropy);

struct UpdatePeak {
  Bytes before_update;  // the model states, the batch and the loss, just before the update
  Bytes update;         // the most held from the update's start to the step's end
};

// One step of mixed-precision fused Adam (the ZeRO paper's case, and the update DeepSpeed runs) on one sample
// per device, on device 0.
UpdatePeak update_peak(Strategy strategy, bool donate) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const TrainStep step(kManyLayers, Optimizer::adam(1e-3).fused(), kDevices,
                       {.strategy = strategy, .precision = Precision::mixed_bf16, .donate_state = donate});
  step(sim, step.init_on_devices(sim), Array::abstract({kDevices, 1, 256}),
       Array::abstract({kDevices, 1}, DType::i32));
  return {step.memory_before_update()[0].total(), step.peak_of_update()[0]};
}

class DonatedUpdatePeak : public ::testing::TestWithParam<Strategy> {};

// Psi parameters on N devices, each updating Psi_u of them (Psi under dp, Psi / N under ZeRO). Donated, the
// update holds the model states and one thing of its own making at its peak:
//   dp, zero2, zero3  the fp32 copy of the gradients it updates with (4 Psi_u), made beside the bf16 ones;
//   zero1             this device's shard of the full bf16 gradients (2 Psi / N), cut from them before they
//                     are released (the fp32 copy of the shard comes after, in their place).
// Each new parameter, master weight and moment then takes its old one's place. Kept, the old state is live
// beside at least the new master weights and moments (12 Psi_u).
TEST_P(DonatedUpdatePeak, IsTheModelStatesAndWhatTheUpdateAllocates) {
  const Strategy strategy = GetParam();
  ASSERT_EQ(kManyLayers.num_parameters() % kDevices, 0);
  const Bytes psi = static_cast<Bytes>(kManyLayers.num_parameters());
  const Bytes updated = strategy == Strategy::dp ? psi : psi / kDevices;
  const Bytes own = strategy == Strategy::zero1 ? 2 * psi / kDevices : 4 * updated;
  const UpdatePeak donated = update_peak(strategy, true);
  EXPECT_EQ(donated.update, donated.before_update + own);
  const UpdatePeak kept = update_peak(strategy, false);
  EXPECT_EQ(kept.before_update, donated.before_update);
  EXPECT_GE(kept.update, kept.before_update + 12 * updated);
}

INSTANTIATE_TEST_SUITE_P(Strategies, DonatedUpdatePeak,
                         ::testing::Values(Strategy::dp, Strategy::zero1, Strategy::zero2, Strategy::zero3),
                         strategy_test_name);

// ---------------------------------------------------------------------------------------------------------
// The same values

const Mlp kSmall({8, 16, 4}, Activation::tanh, Loss::softmax_cross_entropy);
constexpr int kSteps = 2;
constexpr std::int64_t kBatch = 4 * kDevices;

struct Trained {
  Tree params;
  std::vector<double> losses;
};

// kSteps of Adam on the same random batches; the state each step is given is the previous step's result.
Trained train(Strategy strategy, Precision precision, bool donate) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const TrainStep step(kSmall, Optimizer::adam(1e-2), kDevices,
                       {.strategy = strategy, .precision = precision, .donate_state = donate});
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> label(0, 3);
  TrainState state = step.init(kSmall.init(7));
  Trained out;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> x(kBatch * 8), y(kBatch);
    for (auto& v : x) v = normal(gen);
    for (auto& v : y) v = label(gen);
    StepResult result = step(sim, state, shard_batch(Array::from_values({kBatch, 8}, x), kDevices),
                             shard_batch(Array::from_values({kBatch}, y, DType::i32), kDevices));
    out.losses.push_back(sim.device_get(Tree(result.loss)).leaf().item(0));
    state = result.state;
  }
  out.params = step.full_params(sim, state);
  return out;
}

class DonatedUpdateValues : public ::testing::TestWithParam<std::tuple<Strategy, Precision>> {};

TEST_P(DonatedUpdateValues, AreTheSameBitForBit) {
  const auto [strategy, precision] = GetParam();
  const Trained kept = train(strategy, precision, false);
  const Trained donated = train(strategy, precision, true);
  EXPECT_EQ(donated.losses, kept.losses);
  const auto a = donated.params.leaves();
  const auto b = kept.params.leaves();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(array_equal(a[i], b[i])) << "leaf " << i;
}

INSTANTIATE_TEST_SUITE_P(Strategies, DonatedUpdateValues,
                         ::testing::Combine(::testing::Values(Strategy::dp, Strategy::dp_overlap,
                                                              Strategy::zero1, Strategy::zero2,
                                                              Strategy::zero3),
                                            ::testing::Values(Precision::fp32, Precision::mixed_bf16)),
                         [](const auto& test) {
                           std::string name(strategy_name(std::get<0>(test.param)));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name +
                                  (std::get<1>(test.param) == Precision::fp32 ? "_fp32" : "_mixed_bf16");
                         });

// The state a donating step was given is deleted, as JAX deletes a donated array.
TEST(DonatedUpdate, TheOldStateIsDeleted) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const TrainStep step(kSmall, Optimizer::adam(1e-2), kDevices, {.donate_state = true});
  const TrainState state = step.init_on_devices(sim);
  step(sim, state, Array::abstract({kDevices, 4, 8}), Array::abstract({kDevices, 4}, DType::i32));
  EXPECT_THROW(sim.device_get(state.params), RuntimeError);
  EXPECT_THROW(sim.device_get(state.opt_state), RuntimeError);
}

}  // namespace
}  // namespace spmdsim::models
