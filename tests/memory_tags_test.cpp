// The open set of memory tags: the engine's own, then those a layer above registers (the models' here),
// in registration order; a tag registered at run time is counted and reported like the others.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/report_writers.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

std::vector<std::string> tag_names() {
  std::vector<std::string> names;
  for (const MemoryTag tag : memory_tags()) names.emplace_back(memory_tag_name(tag));
  return names;
}

TEST(MemoryTags, TheEngineTagsComeFirstThenTheModels) {
  EXPECT_EQ(tag_names(),
            (std::vector<std::string>{"replicated_args", "input_shards", "outputs", "collective_scratch",
                                      "temporaries", "parameters", "optimizer_state", "gradients",
                                      "activations", "communication_buckets"}));
  EXPECT_EQ(models::tags::parameters.index(), 5U);
}

TEST(MemoryTags, RegisteringANameTwiceGivesTheSameTag) {
  const MemoryTag halo = register_memory_tag("halo_buffers");
  EXPECT_EQ(register_memory_tag("halo_buffers"), halo);
  EXPECT_EQ(register_memory_tag("parameters"), models::tags::parameters);
  EXPECT_EQ(tag_names().back(), "halo_buffers");
}

TEST(MemoryTags, ARegisteredTagShowsInTheReports) {
  const MemoryTag halo = register_memory_tag("halo_buffers");
  const int p = 2;
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(p)));
  // 400 bytes of input per device; x * 2 is held under the new tag while the result is made from it.
  auto f = pmap([halo](const Args& a) -> Tree { return tag_as(a[0].array() * 2.0, halo) + 1.0; });
  Tree out = f(sim, {Array::full({p, 5, 20}, 1.0)});
  const SimulationReport report = sim.report();
  for (const DeviceMemory& memory : report.calls.back().memory) EXPECT_EQ(memory.at_peak[halo.index()], 400);

  std::ostringstream table;
  write_report_table(table, report);
  EXPECT_NE(table.str().find("halo_buffers"), std::string::npos) << table.str();

  const auto json = report_to_json(report);
  EXPECT_EQ(json["memory_tags"].back(), "halo_buffers");
  EXPECT_EQ(json["calls"][0]["devices"][0]["memory"]["at_peak"]["halo_buffers"].get<double>(), 400);
}

TEST(MemoryTags, AFullRegistryIsAValueError) {
  for (std::size_t i = memory_tags().size(); i < kMaxMemoryTags; ++i)
    register_memory_tag("filler_" + std::to_string(i));
  try {
    register_memory_tag("one_too_many");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(
        std::string(e.what()).starts_with("cannot register memory tag 'one_too_many': all 16 tags are taken"))
        << e.what();
  }
}

}  // namespace
}  // namespace spmdsim
