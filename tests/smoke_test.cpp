// The seeds' first example end to end: scale on 4 devices, values and timing sanity.
#include <gtest/gtest.h>

#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

TEST(Smoke, ScaleExampleFromTheSeeds) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(4)));
  std::vector<double> values(16);
  for (int i = 0; i < 16; ++i) values[static_cast<std::size_t>(i)] = i;
  Array x = Array::from_values({4, 4}, values);
  Array s = Array::from_values({4}, {10, 20, 30, 40});
  auto scale = pmap([](const Args& a) -> Tree { return a[0].array() * a[1].array(); }, {.axis_name = "i"});
  Tree out = scale(sim, {x, s});
  EXPECT_EQ(out.leaf().to_string(),
            "[[  0.  10.  20.  30.]\n [ 80. 100. 120. 140.]\n [240. 270. 300. 330.]\n [480. 520. 560. 600.]]");
  EXPECT_GT(sim.now(), 0.0);
}

}  // namespace
}  // namespace spmdsim
