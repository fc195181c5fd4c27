// DeviceSpec's kernel classes (docs/training.md, "Kernel classes"): the closed forms of a matmul's wave
// quantisation, a streaming kernel at the achieved bandwidth, fused attention at its curve, the launch paid
// once per kernel; and every preset's table has a matmul rate for each dtype it claims.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "spmdsim/device_spec.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim {
namespace {

// 100 TFLOP/s bf16 matrix unit at 80%, 10 TFLOP/s vector, 1 TB/s at 90%, 2 us launch, 128x256 tiles on 10
// units, one attention curve at d64.
DeviceSpec round_device() {
  DeviceSpec spec;
  spec.model = "round";
  spec.peak_flops = {{DType::f32, 10e12}};
  spec.memory_capacity = 1e9;
  spec.memory_bandwidth = 1e12;
  spec.memory_efficiency = 0.9;
  spec.launch_overhead = 2e-6;
  spec.matmul = {{DType::bf16, {100e12, 0.8}}};
  spec.tiling = {128, 256, 10};
  spec.attention = {{64, {{1024, 0.2}, {4096, 0.4}}}};
  return spec;
}

TEST(KernelClasses, WaveEfficiencyIsTheFilledShareOfTheTileSlots) {
  const DeviceSpec spec = round_device();
  // 10 tiles of 128x256 on 10 units: one full wave.
  EXPECT_DOUBLE_EQ(spec.wave_efficiency({1, 1280, 256, 64}), 1.0);
  // 11 tiles: two waves, 11 of 20 slots filled.
  EXPECT_DOUBLE_EQ(spec.wave_efficiency({1, 1408, 256, 64}), 11.0 / 20.0);
  // Smaller than a tile in n: the tile is cut to n = 64, 5 tiles of 128x64 on 10 units.
  EXPECT_DOUBLE_EQ(spec.wave_efficiency({1, 640, 64, 64}), 0.5);
  // A batch multiplies the tiles: 2 x 10 tiles, two full waves.
  EXPECT_DOUBLE_EQ(spec.wave_efficiency({2, 1280, 256, 64}), 1.0);
}

TEST(KernelClasses, MatmulTimeIsLaunchPlusTheSlowerOfTheUnitAndTheMemory) {
  const DeviceSpec spec = round_device();
  const MatmulShape shape{1, 1408, 256, 4096};
  const double flops = 2.0 * 1408 * 256 * 4096;
  const double bytes = 2.0 * (1408 * 4096 + 4096 * 256 + 1408 * 256);
  const double compute = flops / (100e12 * 0.8 * (11.0 / 20.0));
  ASSERT_GT(compute, bytes / (1e12 * 0.9));
  EXPECT_DOUBLE_EQ(spec.kernel_time({.flops = flops, .bytes = bytes, .matmul = shape}, DType::bf16),
                   2e-6 + compute);
  // A dtype without a matmul rate runs at its vector peak, efficiency 1, still wave-quantised.
  EXPECT_DOUBLE_EQ(spec.matmul_time(flops, shape, DType::f32), flops / (10e12 * (11.0 / 20.0)));
}

TEST(KernelClasses, StreamingKernelIsLaunchPlusItsBytesAtTheAchievedBandwidth) {
  const DeviceSpec spec = round_device();
  EXPECT_DOUBLE_EQ(spec.kernel_time({.flops = 1e6, .bytes = 9e6}, DType::f32), 2e-6 + 9e6 / 0.9e12);
  // The nominal roofline (what collectives reduce with) keeps the full bandwidth.
  EXPECT_DOUBLE_EQ(spec.op_time(1e6, 9e6, DType::f32), 2e-6 + 9e6 / 1e12);
}

TEST(KernelClasses, AttentionRateFollowsItsCurveInLogSequence) {
  const DeviceSpec spec = round_device();
  EXPECT_DOUBLE_EQ(spec.attention_rate({1024, 64}, DType::bf16), 100e12 * 0.2);
  EXPECT_DOUBLE_EQ(spec.attention_rate({2048, 64}, DType::bf16), 100e12 * 0.3);   // halfway in log2
  EXPECT_DOUBLE_EQ(spec.attention_rate({512, 64}, DType::bf16), 100e12 * 0.2);    // flat beyond the ends
  EXPECT_DOUBLE_EQ(spec.attention_rate({8192, 128}, DType::bf16), 100e12 * 0.4);  // the nearest head dim
  EXPECT_DOUBLE_EQ(
      spec.kernel_time({.flops = 4e9, .bytes = 1e3, .attention = AttentionShape{2048, 64}}, DType::bf16),
      2e-6 + 4e9 / 30e12);
}

TEST(KernelClasses, AttentionRateTakesTheCurvesOfTheShapesKernel) {
  DeviceSpec spec = round_device();
  spec.attention.push_back({64, {{1024, 0.1}, {4096, 0.2}}, AttentionKernel::flash_triton});
  spec.attention.push_back({64, {{1024, 0.2}, {4096, 0.4}}, AttentionKernel::flash1});
  EXPECT_DOUBLE_EQ(spec.attention_rate({2048, 64}, DType::bf16), 100e12 * 0.3);  // FlashAttention-2's curve
  EXPECT_DOUBLE_EQ(spec.attention_rate({2048, 64, AttentionKernel::flash_triton}, DType::bf16),
                   100e12 * 0.15);
  EXPECT_DOUBLE_EQ(spec.attention_rate({2048, 64, AttentionKernel::flash1}, DType::bf16), 100e12 * 0.3);
  EXPECT_TRUE(spec.rates_attention_kernel(AttentionKernel::flash_triton));
  EXPECT_TRUE(spec.rates_attention_kernel(AttentionKernel::flash1));
}

// A device with curves, none of the kernel asked for, refuses it; without any curve every kernel runs at
// the matmul rate.
TEST(KernelClasses, AttentionRateOfAKernelWithoutItsCurveIsAValueError) {
  DeviceSpec spec = round_device();
  EXPECT_FALSE(spec.rates_attention_kernel(AttentionKernel::flash_triton));
  try {
    spec.attention_rate({2048, 64, AttentionKernel::flash_triton}, DType::bf16);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "device 'round' has no published rate of the FlashAttention Triton attention kernel");
  }
  spec.attention.clear();
  EXPECT_TRUE(spec.rates_attention_kernel(AttentionKernel::flash_triton));
  EXPECT_DOUBLE_EQ(spec.attention_rate({2048, 64, AttentionKernel::flash_triton}, DType::bf16), 100e12 * 0.8);
}

TEST(KernelClasses, ValidateNamesTheBadField) {
  DeviceSpec spec = round_device();
  spec.memory_efficiency = 1.5;
  EXPECT_THROW(spec.validate(), std::invalid_argument);
  spec = round_device();
  spec.matmul[DType::bf16].efficiency = 0;
  EXPECT_THROW(spec.validate(), std::invalid_argument);
  spec = round_device();
  spec.attention = {{64, {{4096, 0.4}, {1024, 0.2}}}};
  EXPECT_THROW(spec.validate(), std::invalid_argument);
  EXPECT_NO_THROW(round_device().validate());
}

// Every dtype a preset claims a peak for has a matmul rate, and its kernel figures are in range.
TEST(KernelClassPresets, EveryClaimedDtypeHasAMatmulRate) {
  for (const auto& d : topologies::device_presets()) {
    for (const auto& [dtype, figure] : d.peak_flops) {
      bool found = false;
      for (const auto& m : d.matmul) found = found || m.dtype == dtype;
      EXPECT_TRUE(found) << d.name << " claims " << dtype_name(dtype) << " but has no matmul rate for it";
    }
    const DeviceSpec spec = d.spec();
    EXPECT_GT(spec.tiling.units, 0) << d.name;
    EXPECT_FALSE(spec.attention.empty()) << d.name;
    EXPECT_NO_THROW(spec.validate()) << d.name;
  }
}

// JAX's DEFAULT precision: float32 matmuls on TF32 tensor cores on NVIDIA GPUs, one bf16 MXU pass on TPUs.
TEST(KernelClassPresets, Float32MatmulsRunAtJaxDefaultPrecision) {
  EXPECT_EQ(topologies::device_preset("a100").spec().matmul_rate(DType::f32).peak, 156e12);
  EXPECT_EQ(topologies::device_preset("h100").spec().matmul_rate(DType::f32).peak, 494.5e12);
  for (const char* tpu : {"tpu_v4", "tpu_v5e", "tpu_v5p"}) {
    const DeviceSpec spec = topologies::device_preset(tpu).spec();
    EXPECT_EQ(spec.matmul_rate(DType::f32).peak, spec.matmul_rate(DType::bf16).peak) << tpu;
    EXPECT_EQ(spec.peak_flops_for(DType::f32), spec.peak_flops.at(DType::bf16) / 64) << tpu;  // the VPU
  }
}

}  // namespace
}  // namespace spmdsim
