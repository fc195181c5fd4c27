// The CNN cost model on the tutorials' CNNModel (32x32x3 images, per-device batch 16 = 128 over 8 devices),
// every figure worked out by hand below from the layer shapes: Flax's 'SAME' convolutions keep 32x32 and
// 16x16, each 2x2 pool halves them, and the dense layer sees 8 * 8 * 64 = 4096 features.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spmdsim/errors.hpp"
#include "spmdsim/models/cnn.hpp"

namespace spmdsim::models {
namespace {

constexpr std::int64_t kBatch = 16;

struct Expected {
  std::string kind;
  Shape output;
  std::int64_t parameters;
  double flops_per_example;
  double output_elements;  // per example; 0 for the flatten view
};

// Per example, by hand:
//   conv1  3x3x3 weights into 32 channels: 3*3*3*32 + 32 = 896 params; 32*32*32 outputs of 2*27 + 1 FLOPs
//   relu   one max per element
//   pool   4 inputs per output: 3 comparisons, 16*16*32 outputs
//   conv2  3*3*32*64 + 64 = 18496 params; 16*16*64 outputs of 2*288 + 1 FLOPs
//   dense  4096*10 + 10 = 40970 params; 10 outputs of 2*4096 + 1 FLOPs
const std::vector<Expected> kSeedsCnn{
    {"conv2d", {32, 32, 32}, 896, 32 * 32 * 32 * (2 * 27 + 1), 32 * 32 * 32},
    {"relu", {32, 32, 32}, 0, 32 * 32 * 32, 32 * 32 * 32},
    {"max_pool", {16, 16, 32}, 0, 16 * 16 * 32 * 3, 16 * 16 * 32},
    {"conv2d", {16, 16, 64}, 18496, 16 * 16 * 64 * (2 * 288 + 1), 16 * 16 * 64},
    {"relu", {16, 16, 64}, 0, 16 * 16 * 64, 16 * 16 * 64},
    {"max_pool", {8, 8, 64}, 0, 8 * 8 * 64 * 3, 8 * 8 * 64},
    {"flatten", {4096}, 0, 0, 0},
    {"dense", {10}, 40970, 10 * (2 * 4096 + 1), 10},
};

TEST(CnnCost, SeedsCnnLayerByLayer) {
  const CnnCost cost = cnn_cost(seeds_cnn(), seeds_cnn_input(), kBatch, DType::f32);
  ASSERT_EQ(cost.layers.size(), kSeedsCnn.size());
  for (std::size_t i = 0; i < kSeedsCnn.size(); ++i) {
    SCOPED_TRACE("layer " + std::to_string(i));
    const Expected& e = kSeedsCnn[i];
    const CnnLayerCost& got = cost.layers[i];
    EXPECT_EQ(got.kind, e.kind);
    EXPECT_EQ(got.output, e.output);
    EXPECT_EQ(got.parameters, e.parameters);
    EXPECT_EQ(got.forward_flops, kBatch * e.flops_per_example);
    EXPECT_EQ(got.output_bytes, kBatch * e.output_elements * 4);
  }
}

TEST(CnnCost, SeedsCnnTotals) {
  const CnnCost f32 = cnn_cost(seeds_cnn(), seeds_cnn_input(), kBatch, DType::f32);
  // 896 + 18496 + 40970.
  EXPECT_EQ(f32.parameters, 60'362);
  EXPECT_EQ(f32.parameter_bytes, 60'362 * 4);
  // 1,802,240 + 32,768 + 24,576 + 9,453,568 + 16,384 + 12,288 + 81,930 per example.
  EXPECT_EQ(f32.forward_flops, kBatch * 11'423'754.0);
  // (32768 + 32768 + 8192 + 16384 + 16384 + 4096 + 10) elements of 4 bytes per example.
  EXPECT_EQ(f32.activation_bytes, kBatch * 442'408.0);

  const CnnCost bf16 = cnn_cost(seeds_cnn(), seeds_cnn_input(), kBatch, DType::bf16);
  EXPECT_EQ(bf16.forward_flops, f32.forward_flops);
  EXPECT_EQ(bf16.activation_bytes, f32.activation_bytes / 2);
  EXPECT_EQ(bf16.parameter_bytes, 60'362 * 2);
}

TEST(CnnCost, OtherClassCountsOnlyChangeTheDenseLayer) {
  const CnnCost cost = cnn_cost(seeds_cnn(100), seeds_cnn_input(), 1, DType::f32);
  EXPECT_EQ(cost.layers.back().parameters, 4096 * 100 + 100);
  EXPECT_EQ(cost.parameters, 896 + 18496 + 4096 * 100 + 100);
}

TEST(CnnCost, LayersThatDoNotFitAreValueErrors) {
  try {
    cnn_cost({Conv2d{4, 8, 3}}, {32, 32, 3}, 1, DType::f32);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "CNN layer 0 (conv2d 4->8 3x3): does not fit an input of shape (32, 32, 3)");
  }
  try {
    cnn_cost({Flatten{}, Dense{100, 10}}, {8, 8, 1}, 1, DType::f32);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "CNN layer 1 (dense 100->10): does not fit an input of shape (64,)");
  }
  try {
    cnn_cost({Flatten{}, MaxPool{2}}, {8, 8, 1}, 1, DType::f32);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "CNN layer 1 (max_pool): expects an image (height, width, channels), got (64,)");
  }
  EXPECT_THROW(cnn_cost(seeds_cnn(), seeds_cnn_input(), 0, DType::f32), ValueError);
}

}  // namespace
}  // namespace spmdsim::models
