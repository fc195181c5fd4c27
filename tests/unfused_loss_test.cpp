// The cross-entropy as PyTorch runs it on materialised logits (models::unfused_softmax_cross_entropy): the
// fused loss's values, PyTorch's six kernels, and two more logits-sized tensors at its peak than the logits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/losses.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "test_cluster.hpp"

namespace spmdsim::models {
namespace {

constexpr std::int64_t kRows = 4;
constexpr std::int64_t kClasses = 5;

Array logits() {
  std::vector<double> values;
  for (std::int64_t i = 0; i < kRows * kClasses; ++i)
    values.push_back(0.37 * static_cast<double>(i % 7) - 1.1);
  return Array::from_values({1, kRows, kClasses}, values);
}

Array labels() {
  return Array::from_values({1, kRows}, {3, 0, 4, 1}, DType::i32);
}

// One pmap of the unfused loss on the round-numbers device: the logits (`logits_dtype`) made on the device
// and handed over, the loss's tensors in `dtype`.
struct UnfusedRun {
  Array loss;
  Array seed;                        // as the device computed it, in the logits' dtype
  Bytes over_logits = 0;             // the peak from the logits on, less what was held with them
  std::vector<std::string> kernels;  // the call's compute spans, in order
};

UnfusedRun run_unfused(DType logits_dtype, DType dtype) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(1)));
  Bytes held_at_mark = 0;
  Bytes peak = 0;
  Tree out = pmap(
      [&](const Args& a) -> Tree {
        Array made = a[0].array() * 1.0;  // the model's output: the loss releases it
        const std::size_t mark = memory_mark();
        held_at_mark = live_memory().total();
        LossAndSeed both = unfused_softmax_cross_entropy(std::move(made), a[1].array(), dtype);
        peak = peak_memory_since(mark);
        return Tree::list({Tree(both.loss), Tree(both.seed)});
      },
      {.name = "loss"})(sim, {astype(logits(), logits_dtype), labels()});
  const Tree values = sim.device_get(out);
  UnfusedRun run{.loss = values[0].leaf(), .seed = values[1].leaf(), .over_logits = peak - held_at_mark};
  const auto report = sim.report();  // named: a range-for would not keep a temporary alive
  for (const CallReport& call : report.calls)
    if (call.name == "loss")
      for (const Span& span : call.spans.at(0))
        if (span.kind == SpanKind::compute) run.kernels.push_back(span.name);
  return run;
}

// The fused loss's values for the same logits and labels.
LossAndSeed fused_loss() {
  return loss_and_seed(Loss::softmax_cross_entropy, reshape(logits(), {kRows, kClasses}),
                       reshape(labels(), {kRows}));
}

TEST(UnfusedCrossEntropy, GivesTheFusedValuesInPyTorchsKernelsWithThreeLogitsSizedTensorsAtItsPeak) {
  const UnfusedRun run = run_unfused(DType::f32, DType::f32);
  const LossAndSeed fused = fused_loss();
  EXPECT_TRUE(allclose(run.loss, reshape(fused.loss, {1}), 1e-6, 1e-7));
  EXPECT_TRUE(allclose(run.seed, reshape(fused.seed, {1, kRows, kClasses}), 1e-6, 1e-7));
  EXPECT_EQ(run.kernels,
            (std::vector<std::string>{"multiply", "contiguous", "log_softmax", "nll_loss",
                                      "nll_loss_backward", "log_softmax_backward", "contiguous_backward"}));
  // At log_softmax the logits, their copy and the log-probabilities; at its backward the log-probabilities,
  // both gradients and the 4-byte loss.
  const Bytes tensor = kRows * kClasses * 4;
  EXPECT_EQ(run.over_logits, 2 * tensor + 4);
}

// Under torch.autocast the copy is cast to float32 and the gradient back: bfloat16 logits (2 bytes an
// element) with float32 log-probabilities and gradients (4). At log_softmax the logits, the copy, the float32
// input and the log-probabilities; at its backward the log-probabilities and both gradients (12 bytes an
// element) and the loss: 10 bytes an element and 4 more than the logits alone.
TEST(UnfusedCrossEntropy, UnderAutocastItsTensorsAreFloat32) {
  const UnfusedRun run = run_unfused(DType::bf16, DType::f32);
  EXPECT_EQ(run.seed.dtype(), DType::bf16);
  EXPECT_EQ(run.over_logits, 10 * kRows * kClasses + 4);
  const LossAndSeed fused = fused_loss();
  EXPECT_TRUE(allclose(run.loss, reshape(fused.loss, {1}), 2e-2, 1e-2));
  EXPECT_TRUE(allclose(astype(run.seed, DType::f32), reshape(fused.seed, {1, kRows, kClasses}), 2e-2, 1e-2));
}

TEST(UnfusedCrossEntropy, RefusesLabelsThatAreNotOnePerRow) {
  EXPECT_THROW(unfused_softmax_cross_entropy(reshape(logits(), {kRows, kClasses}),
                                             Array::from_values({kRows}, {0, 1, 2, 3}), DType::f32),
               ValueError);
}

}  // namespace
}  // namespace spmdsim::models
