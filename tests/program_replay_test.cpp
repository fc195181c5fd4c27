// PmapOptions::trace_once: a call whose function runs once and is replayed on every device must give every
// device what running the function there gives, to the last event: the same compute, communication, idle and
// transfer times, the same spans, the same memory timeline (every allocation, release and retag, at the same
// time), the same peaks by tag, the same device effects and the same outputs. Where the function does what
// only one device can, the call runs it on every device and its results are those of a call without the
// option.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/models/transformer.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

constexpr int kDevices = 4;

// Everything a simulation reports of each device, in one list of numbers: two runs agree when their lists do.
std::vector<double> everything(const SimulationReport& report) {
  std::vector<double> out{report.simulated_time, static_cast<double>(report.calls.size())};
  for (const CallReport& call : report.calls) {
    out.insert(out.end(), {call.start, call.end});  // not whether it was replayed: replayed() reads that
    for (std::size_t d = 0; d < call.devices.size(); ++d) {
      const DeviceTimes& t = call.times[d];
      out.insert(out.end(), {t.compute, t.transfer, t.communication_total(), t.idle,
                             static_cast<double>(t.bytes_sent), static_cast<double>(call.memory[d].peak)});
      for (const Bytes bytes : call.memory[d].at_peak) out.push_back(static_cast<double>(bytes));
      out.push_back(static_cast<double>(call.spans[d].size()));
      for (const Span& span : call.spans[d]) out.insert(out.end(), {span.start, span.end});
    }
  }
  for (const MemoryTimeline& timeline : report.memory_timelines) {
    out.push_back(static_cast<double>(timeline.size()));
    for (const MemoryEvent& event : timeline)
      out.insert(out.end(), {event.time, static_cast<double>(event.in_use),
                             static_cast<double>(event.tag.index()), static_cast<double>(event.delta)});
  }
  return out;
}

// Whether the calls named `name` were replayed, one 1 or 0 each.
std::vector<double> replayed(const SimulationReport& report, const std::string& name) {
  std::vector<double> out;
  for (const CallReport& call : report.calls)
    if (call.name == name) out.push_back(call.replayed ? 1 : 0);
  return out;
}

std::vector<double> shapes_of(const Tree& tree) {
  std::vector<double> out;
  for (const Array& leaf : tree.leaves())
    for (const auto extent : leaf.shape()) out.push_back(static_cast<double>(extent));
  return out;
}

// A step of a small program: matmuls, a donated parameter tree, a tag, a tree pmean (joined into one
// all-reduce), a psum, a pmax and a device effect that reads each device's memory as it runs.
PmapOptions step_options(bool trace_once) {
  return {.axis_name = "i", .donate_argnums = {0}, .name = "step", .trace_once = trace_once};
}

Tree step(const Args& args, const std::shared_ptr<std::vector<double>>& live) {
  const MemoryTag halo = register_memory_tag("halo_buffers");
  const Tree params = args[0].tree();
  const Array x = args[1].array();
  const Array h = tag_as(matmul(x, params["w"].leaf()), halo);
  const Array loss = pmax(psum(sum(h * 2.0), "i"), "i");
  const Tree grads = Tree::dict({{"w", matmul(x, h, {.a = true})}, {"b", sum(h, 0)}});
  device_effect([live](int index) { (*live)[static_cast<std::size_t>(index)] = live_memory().total(); });
  const Tree mean = pmean(grads, "i");
  return Tree::tuple({Tree::dict({{"w", params["w"].leaf() - mean["w"].leaf()},
                                  {"b", params["b"].leaf() - mean["b"].leaf()}}),
                      loss});
}

// What each device held at the device effect, then everything the report says, then the outputs' shapes.
std::vector<double> run_step(bool trace_once) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  auto live = std::make_shared<std::vector<double>>(kDevices);
  const auto f = pmap([live](const Args& args) { return step(args, live); }, step_options(trace_once));
  const Tree params =
      Tree::dict({{"w", Array::abstract({kDevices, 64, 64})}, {"b", Array::abstract({kDevices, 64})}});
  const Array x = Array::abstract({kDevices, 32, 64});
  Tree out = f(sim, {params, x});
  out = f(sim, {out[0], x});  // its results, resident and donated, are the second call's parameters
  std::vector<double> numbers = replayed(sim.report(), "step");
  numbers.insert(numbers.end(), live->begin(), live->end());
  const auto reported = everything(sim.report());
  numbers.insert(numbers.end(), reported.begin(), reported.end());
  const auto shapes = shapes_of(out);
  numbers.insert(numbers.end(), shapes.begin(), shapes.end());
  return numbers;
}

void expect_same(const std::vector<double>& replayed, const std::vector<double>& run_everywhere) {
  ASSERT_EQ(replayed.size(), run_everywhere.size());
  for (std::size_t i = 0; i < replayed.size(); ++i)
    EXPECT_EQ(replayed[i], run_everywhere[i]) << "number " << i;
}

TEST(ProgramReplay, GivesEveryDeviceWhatRunningTheFunctionThereGives) {
  auto replayed = testing::in_child_process([] { return run_step(true); });
  auto run_everywhere = testing::in_child_process([] { return run_step(false); });
  ASSERT_GE(replayed.size(), 2 + kDevices);
  EXPECT_EQ(std::vector<double>(replayed.begin(), replayed.begin() + 2), (std::vector<double>{1, 1}));
  EXPECT_EQ(std::vector<double>(run_everywhere.begin(), run_everywhere.begin() + 2),
            (std::vector<double>{0, 0}));
  for (std::size_t d = 0; d < kDevices; ++d) EXPECT_GT(replayed[2 + d], 0) << "device " << d << "'s effect";
  replayed.erase(replayed.begin(), replayed.begin() + 2);
  run_everywhere.erase(run_everywhere.begin(), run_everywhere.begin() + 2);
  expect_same(replayed, run_everywhere);
}

// A function that reads its axis index differs from one device to another: the call runs it on every
// device, each with its own index.
TEST(ProgramReplay, AFunctionThatReadsItsAxisIndexRunsOnEveryDevice) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  const auto f =
      pmap([](const Args&) -> Tree { return axis_index("i"); }, {.axis_name = "i", .trace_once = true});
  EXPECT_EQ(f(sim, {Array::abstract({kDevices, 3})}).leaf().to_doubles(), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_FALSE(sim.report().calls.back().replayed);
}

// So does one that reads its device's memory outside device_effect: each device reads its own.
TEST(ProgramReplay, AFunctionThatReadsItsMemoryOutsideADeviceEffectRunsOnEveryDevice) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(kDevices)));
  auto read = std::make_shared<std::vector<double>>();
  const auto f = pmap(
      [read](const Args& args) -> Tree {
        read->push_back(live_memory().total());
        return args[0].array() * 2.0;
      },
      {.axis_name = "i", .trace_once = true});
  f(sim, {Array::abstract({kDevices, 100})});
  EXPECT_EQ(*read, std::vector<double>(kDevices, 400));
  EXPECT_FALSE(sim.report().calls.back().replayed);
}

// The training step of a small transformer, replayed (TrainOptions::trace_once) and run on every device:
// the same report, the same memory snapshots of the step.
struct TrainCase {
  models::Precision precision;
  int micro_batches;
  bool donate;
};

std::vector<double> train(const TrainCase& c, bool trace_once) {
  using namespace models;
  Simulation sim(topologies::node_platform(topologies::node_preset("dgx_h100")));
  const Transformer model({.layers = 2, .hidden = 128, .heads = 4, .seq_len = 32, .vocab = 64});
  const TrainStep step(model, Optimizer::adam(1e-3), 8,
                       {.micro_batches = c.micro_batches,
                        .precision = c.precision,
                        .donate_state = c.donate,
                        .trace_once = trace_once});
  const Array tokens = Array::abstract({8, 2, 32}, DType::i32);
  StepResult result = step(sim, step.init_on_devices(sim), tokens, tokens);
  result = step(sim, result.state, tokens, tokens);
  std::vector<double> numbers = replayed(sim.report(), "train_step");
  const auto reported = everything(sim.report());
  numbers.insert(numbers.end(), reported.begin(), reported.end());
  for (const auto& snapshots : {step.memory_before_update(), step.peak_before_update()})
    for (const MemoryByTag& memory : snapshots)
      for (const Bytes bytes : memory.bytes) numbers.push_back(static_cast<double>(bytes));
  for (const Bytes bytes : step.peak_of_update()) numbers.push_back(static_cast<double>(bytes));
  return numbers;
}

class ReplayedTrainStep : public ::testing::TestWithParam<TrainCase> {};

TEST_P(ReplayedTrainStep, IsTheStepRunOnEveryDevice) {
  const TrainCase c = GetParam();
  auto replayed = testing::in_child_process([&] { return train(c, true); });
  auto run_everywhere = testing::in_child_process([&] { return train(c, false); });
  EXPECT_EQ(std::vector<double>(replayed.begin(), replayed.begin() + 2), (std::vector<double>{1, 1}));
  EXPECT_EQ(std::vector<double>(run_everywhere.begin(), run_everywhere.begin() + 2),
            (std::vector<double>{0, 0}));
  replayed.erase(replayed.begin(), replayed.begin() + 2);
  run_everywhere.erase(run_everywhere.begin(), run_everywhere.begin() + 2);
  expect_same(replayed, run_everywhere);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReplayedTrainStep,
                         ::testing::Values(TrainCase{models::Precision::fp32, 1, false},
                                           TrainCase{models::Precision::mixed_bf16, 2, true}),
                         [](const auto& test) {
                           return std::string(test.param.precision == models::Precision::fp32 ? "fp32"
                                                                                              : "mixed") +
                                  "_micro" + std::to_string(test.param.micro_batches) +
                                  (test.param.donate ? "_donated" : "");
                         });

}  // namespace
}  // namespace spmdsim
