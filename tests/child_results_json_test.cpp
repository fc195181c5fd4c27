// The results a forked child hands its parent (`spmdsim train`, `spmdsim memory`) come back field for field
// through their JSON: every field, optional ones empty and set, doubles to the last bit.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "commands/memory/memory_run.hpp"
#include "commands/train/training_run.hpp"
#include "spmdsim/models/memory_tags.hpp"

namespace spmdsim::cli {
namespace {

template <class T>
T round_trip(const T& value) {
  return nlohmann::json::parse(nlohmann::json(value).dump()).get<T>();
}

TrainingResult training_result() {
  return {.devices = 8,
          .global_batch = 256,
          .step_time = 1.0 / 3.0,
          .compute = 0.1,
          .communication = 2e-7,
          .hidden_communication = 3.5e-9,
          .transfer = 1e-300,
          .idle = 0,
          .peak_memory = 123456789.0,
          .last_loss = 0.693147180559945,
          .platform = "8 devices on a switch",
          .simgrid = {{"network/model", "CM02"}, {"network/crosstraffic", "0"}}};
}

void expect_same(const TrainingResult& a, const TrainingResult& b) {
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.global_batch, b.global_batch);
  EXPECT_EQ(a.step_time, b.step_time);
  EXPECT_EQ(a.compute, b.compute);
  EXPECT_EQ(a.communication, b.communication);
  EXPECT_EQ(a.hidden_communication, b.hidden_communication);
  EXPECT_EQ(a.transfer, b.transfer);
  EXPECT_EQ(a.idle, b.idle);
  EXPECT_EQ(a.peak_memory, b.peak_memory);
  EXPECT_EQ(a.last_loss, b.last_loss);
  EXPECT_EQ(a.platform, b.platform);
  EXPECT_EQ(a.simgrid, b.simgrid);
}

TEST(ChildResultsJson, TrainingResultRoundTrips) {
  const auto result = training_result();
  expect_same(round_trip(result), result);
}

TEST(ChildResultsJson, TrainingResultWithoutLossRoundTrips) {
  auto result = training_result();
  result.last_loss.reset();
  const auto back = round_trip(result);
  EXPECT_FALSE(back.last_loss.has_value());
  expect_same(back, result);
}

MemoryMeasurement measurement() {
  MemoryMeasurement m{.device = 3,
                      .device_name = "gpu3",
                      .capacity = 80.0 * (1ull << 30),
                      .peak = 1.5e9,
                      .model_states = 7.25e8,
                      .step_start = 0.125,
                      .step_end = 1.0 / 7.0,
                      .platform = "a DGX H100",
                      .simgrid = {{"network/model", "LV08"}}};
  for (std::size_t tag = 0; tag < m.at_peak.size(); ++tag) m.at_peak[tag] = 1000.5 * static_cast<double>(tag);
  m.timeline.push_back({.time = 0.5, .in_use = 4096, .tag = models::tags::parameters, .delta = 4096});
  m.timeline.push_back({.time = 0.75, .in_use = 0, .tag = models::tags::gradients, .delta = -4096});
  return m;
}

void expect_same(const MemoryMeasurement& a, const MemoryMeasurement& b) {
  EXPECT_EQ(a.out_of_memory, b.out_of_memory);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.device_name, b.device_name);
  EXPECT_EQ(a.capacity, b.capacity);
  EXPECT_EQ(a.peak, b.peak);
  EXPECT_EQ(a.at_peak, b.at_peak);
  EXPECT_EQ(a.model_states, b.model_states);
  EXPECT_EQ(a.step_start, b.step_start);
  EXPECT_EQ(a.step_end, b.step_end);
  ASSERT_EQ(a.timeline.size(), b.timeline.size());
  for (std::size_t i = 0; i < a.timeline.size(); ++i) {
    EXPECT_EQ(a.timeline[i].time, b.timeline[i].time);
    EXPECT_EQ(a.timeline[i].in_use, b.timeline[i].in_use);
    EXPECT_EQ(a.timeline[i].tag, b.timeline[i].tag);
    EXPECT_EQ(a.timeline[i].delta, b.timeline[i].delta);
  }
  EXPECT_EQ(a.platform, b.platform);
  EXPECT_EQ(a.simgrid, b.simgrid);
}

TEST(ChildResultsJson, MemoryMeasurementRoundTrips) {
  const auto m = measurement();
  expect_same(round_trip(m), m);
}

TEST(ChildResultsJson, OutOfMemoryMeasurementRoundTrips) {
  MemoryMeasurement m{.out_of_memory = "RESOURCE_EXHAUSTED: device 0\n  live: parameters", .capacity = 1e9};
  const auto back = round_trip(m);
  EXPECT_EQ(back.out_of_memory, m.out_of_memory);
  EXPECT_TRUE(back.timeline.empty());
  expect_same(back, m);
}

}  // namespace
}  // namespace spmdsim::cli
