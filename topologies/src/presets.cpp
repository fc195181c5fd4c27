// THE table of presets: every published figure spmdsim uses for a real machine, each with its source.
//
// Sources are sections and provenance tags of ../shared/REFERENCES.md: [V] vendor or primary source code,
// [P] paper, [S] secondary compilation citing the vendor (S1 = stas00/ml-engineering, S2/S3 =
// glennklockwood.com, S4 = thundercompute), [M] third-party measurement; P-SB = jax-ml/scaling-book,
// V-v4/V-v5e/V-v5p = Google Cloud TPU docs, V-HGX = NVIDIA's HGX A100 blog, V-MLPerf = MLCommons H200 system
// description. "derived:" is computed from such figures; "assumed:" has no published figure and says why it
// is there at all. Figures REFERENCES.md does not have are left out (docs/presets.md lists them).
//
// Units: SI. kGiB because vendors' "GB" of HBM means GiB (REFERENCES §0); GB/s = 1e9 B/s; TFLOP/s = 1e12.
#include "spmdsim/topologies/presets.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::topologies {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kKiB = 1024.0;
constexpr double kGB = 1e9;
constexpr double kTFLOP = 1e12;
constexpr double kMicrosecond = 1e-6;

// ---------------------------------------------------------------------------------------------------------
// Network models. SimGrid has one model per simulation; DESIGN.md: LV08 (the default) applies TCP factors
// fitted to TCP over Ethernet (latency x13.01, bandwidth x0.97), a 5% reverse cross-traffic flow and a TCP
// window cap; CM02 with cross-traffic and the window off is the plain alpha-beta model. No preset here is
// TCP, so all use CM02 and carry the protocol's efficiency in a published effective bandwidth instead. LV08
// stays the right choice for TCP/Ethernet platforms (none is a preset yet).

const NetworkModel& nvlink_model() {
  static const NetworkModel model{
      "CM02", alpha_beta_config(),
      "NVLink/NVSwitch and xGMI are credit-based point-to-point fabrics, not TCP: no slow start, window or "
      "ACK "
      "reverse flow; their protocol overhead is in the calibrated link bandwidth"};
  return model;
}

const NetworkModel& pcie_model() {
  static const NetworkModel model{"CM02", alpha_beta_config(),
                                  "PCIe moves TLPs under link-level credit flow control, not TCP; its "
                                  "overhead shows in the measured rate"};
  return model;
}

const NetworkModel& infiniband_model() {
  static const NetworkModel model{"CM02", alpha_beta_config(),
                                  "InfiniBand RDMA has credit-based flow control and no TCP window; LV08's "
                                  "x13.01 latency factor (fitted to "
                                  "TCP) would turn 0.6 us into 7.8 us"};
  return model;
}

const NetworkModel& ici_model() {
  static const NetworkModel model{"CM02", alpha_beta_config(),
                                  "TPU ICI links join neighbouring chips directly, not over TCP; the "
                                  "scaling-book's alpha-beta figures assume "
                                  "exactly this model"};
  return model;
}

// ---------------------------------------------------------------------------------------------------------
// Devices. Peak FLOP/s are dense (REFERENCES §0: NVIDIA also prints 2:4-sparse figures, 2x these). The kernel
// classes' figures (§K.*) are listed in docs/presets.md, "Kernel-class references".

// FlashAttention-2's sequence lengths in its published forward + backward benchmark (§K.3).
const std::vector<std::int64_t> kAttentionSeqs = {512, 1024, 2048, 4096, 8192, 16384};

// Published TFLOP/s at kAttentionSeqs as fractions of `peak`.
AttentionFigure measured_attention(std::int64_t head_dim, double peak, const std::vector<double>& tflops,
                                   std::string_view source,
                                   AttentionKernel kernel = AttentionKernel::flash2) {
  AttentionFigure figure{head_dim, {}, source, kernel};
  for (std::size_t i = 0; i < tflops.size(); ++i)
    figure.points.emplace_back(kAttentionSeqs[i], tflops[i] * kTFLOP / peak);
  return figure;
}

// FlashAttention-2, causal, forward + backward, batch x seq = 16k, hidden 2048 (§K.3 [FA2]), and the same
// benchmark's "FlashAttention" bars (flash-attn 1.x's CUDA kernel); on the A100 also its "FlashAttention
// Triton" bars.
std::vector<AttentionFigure> a100_attention() {
  return {measured_attention(64, 312 * kTFLOP, {88, 119, 140, 156, 165, 171},
                             "§K.3 [FA2] A100 80GB, causal d64, of 312 TFLOP/s"),
          measured_attention(128, 312 * kTFLOP, {99, 133, 155, 173, 182, 189},
                             "§K.3 [FA2] A100 80GB, causal d128, of 312 TFLOP/s"),
          measured_attention(64, 312 * kTFLOP, {58, 70, 77, 87, 92, 97},
                             "§K.3 [FA2] A100 80GB, FlashAttention (1.x), causal d64, of 312 TFLOP/s",
                             AttentionKernel::flash1),
          measured_attention(128, 312 * kTFLOP, {55, 62, 69, 76, 80, 83},
                             "§K.3 [FA2] A100 80GB, FlashAttention (1.x), causal d128, of 312 TFLOP/s",
                             AttentionKernel::flash1),
          measured_attention(64, 312 * kTFLOP, {59, 75, 79, 76, 79, 80},
                             "§K.3 [FA2] A100 80GB, FlashAttention Triton, causal d64, of 312 TFLOP/s",
                             AttentionKernel::flash_triton),
          measured_attention(128, 312 * kTFLOP, {50, 61, 68, 74, 78, 80},
                             "§K.3 [FA2] A100 80GB, FlashAttention Triton, causal d128, of 312 TFLOP/s",
                             AttentionKernel::flash_triton)};
}
std::vector<AttentionFigure> h100_attention(std::string_view source) {
  return {measured_attention(64, 989.4 * kTFLOP, {141, 192, 232, 257, 273, 284}, source),
          measured_attention(128, 989.4 * kTFLOP, {163, 221, 265, 294, 308, 328}, source)};
}
// The H100 die's: FlashAttention-2's curves and the same benchmark's FlashAttention (1.x) bars, which run on
// Hopper as they do on the A100 (not on the devices that only borrow the H100's fractions of peak).
std::vector<AttentionFigure> hopper_attention(std::string_view flash2_source,
                                              std::string_view flash1_source) {
  std::vector<AttentionFigure> figures = h100_attention(flash2_source);
  figures.push_back(measured_attention(64, 989.4 * kTFLOP, {104, 123, 136, 138, 149, 156}, flash1_source,
                                       AttentionKernel::flash1));
  figures.push_back(measured_attention(128, 989.4 * kTFLOP, {98, 109, 108, 126, 135, 137}, flash1_source,
                                       AttentionKernel::flash1));
  return figures;
}

constexpr std::string_view kH100Attention = "§K.3 [FA2] H100 SXM5, causal, of 989.4 TFLOP/s";
constexpr std::string_view kAssumedAttention =
    "assumed: H100's FlashAttention-2 fractions of peak (§K.3 [FA2]); none published for this device";

// The NVIDIA GPUs' shared kernel figures.
constexpr Figure kNvidiaMemoryEfficiency{
    0.90, "§K.6 [MI300X-paper] NVIDIA GPUs reach 'up to 90%' of peak HBM bandwidth (secondary summaries)"};
constexpr Figure kNvidiaLaunch{
    2 * kMicrosecond,
    "§K.7 [dispatch] a 24 us kernel dispatched in 25.8 us through a CUDA graph (B200); XLA launches "
    "through command buffers"};

// TPU: float32 matmuls at DEFAULT precision are one bfloat16 pass on the MXU (§K.4); the MXU efficiency
// of v5e's large XLA matmul (§K.2) stands in where none is published.
std::vector<MatmulFigure> tpu_matmul(double bf16_peak, std::string_view peak_source, Figure efficiency) {
  return {{DType::bf16, {bf16_peak, peak_source}, efficiency},
          {DType::f32,
           {bf16_peak, "§K.4 [JAX-precision] float32 at DEFAULT: one bfloat16 pass on the MXU"},
           efficiency}};
}
constexpr Figure kTpuAssumedEfficiency{
    0.923, "assumed: TPU v5e's 8192^3 XLA matmul, 181.82 of 197 TFLOP/s (§K.2 [JAX-Pallas])"};
constexpr Figure kTpuMemoryEfficiency{0.90, "assumed: the NVIDIA GPUs' 90% (§K.6); no TPU figure published"};
constexpr Figure kTpuLaunch{0, "assumed: one XLA program per step on the TPU, no host launch per kernel"};
constexpr std::string_view kTpuVector =
    "derived: VPU of 2048 float32 ALUs per TensorCore at the MXU clock (§K.5 [P-SB]): bf16 peak / 64";

// The A100 SXM4: the 80 GB and 40 GB boards are one GA100 at the same clocks (the same peaks, tiles and
// kernel rates), with different HBM.
DevicePreset a100(std::string_view name, std::string_view model, Figure memory, Figure bandwidth) {
  using enum DType;
  return {name,
          model,
          {{bf16, {312 * kTFLOP, "§1.1 [S1,S2] dense tensor"}},
           {f16, {312 * kTFLOP, "§1.1 [S1,S2] dense tensor"}},
           {f32, {19.5 * kTFLOP, "§1.1 [S1,S2] non-tensor"}}},
          memory,
          bandwidth,
          "float32 matmuls run on TF32 tensor cores (JAX's DEFAULT precision), other float32 work at the "
          "non-tensor peak",
          {{bf16,
            {312 * kTFLOP, "§1.1 [S1,S2] dense tensor"},
            {0.869, "§K.1 [MAMF] 271.2 of 312 TFLOP/s at its best shape"}},
           {f16,
            {312 * kTFLOP, "§1.1 [S1,S2] dense tensor"},
            {0.869, "assumed: bf16's (§K.1); fp16 and bf16 within 2% in §K.2 [crowd] A100 SXM"}},
           {f32,
            {156 * kTFLOP, "§1.1 [S1] TF32 tensor, dense (§K.4: JAX's DEFAULT for float32)"},
            {0.865, "§K.2 [NV-A100] TF32 ~135 of 156 TFLOP/s at 8192^3, read off the plot"}}},
          {128, 256, 108, "§K.1 [S1-perf] 128x256 tiles (its wave-quantization example), 108 SMs"},
          kNvidiaMemoryEfficiency,
          kNvidiaLaunch,
          a100_attention()};
}

std::vector<DevicePreset> make_devices() {
  using enum DType;
  return {
      a100("a100", "NVIDIA A100 SXM4 80GB", {80 * kGiB, "§1.1 [S2] '80 GB' HBM2e"},
           {2039 * kGB, "§1.1 NVIDIA datasheet via [S2,S4]"}),
      a100("a100_40gb", "NVIDIA A100 SXM4 40GB", {40 * kGiB, "§1.1 [A100-40] '40 GB' HBM2"},
           {1555 * kGB, "§1.1 [A100-40] NVIDIA datasheet, A100 40GB SXM"}),
      {"h100",
       "NVIDIA H100 SXM5 80GB",
       {{bf16, {989.4 * kTFLOP, "§1.1 [S1,S2] dense tensor"}},
        {f16, {989.4 * kTFLOP, "§1.1 [S1,S2] dense tensor"}},
        {f32, {66.9 * kTFLOP, "§1.1 [S1,S2] non-tensor"}}},
       {80 * kGiB, "§1.1 [S1,S2] '80 GB' HBM3"},
       {3350 * kGB, "§1.1 [S1,S2]"},
       "FP8 dense 1,979 TFLOP/s (§1.1 [S1]) has no spmdsim dtype; float32 matmuls run on TF32",
       {{bf16,
         {989.4 * kTFLOP, "§1.1 [S1,S2] dense tensor"},
         {0.803, "§K.1 [MAMF] 794.5 of 989 TFLOP/s at its best shape"}},
        {f16,
         {989.4 * kTFLOP, "§1.1 [S1,S2] dense tensor"},
         {0.803, "assumed: bf16's (§K.1); fp16 and bf16 within 4% in §K.2 [crowd] H100 SXM"}},
        {f32,
         {494.5 * kTFLOP, "§1.1 [S1] TF32 tensor, dense (§K.4: JAX's DEFAULT for float32)"},
         {0.813, "§K.2 [crowd] H100 SXM TF32 402.15 of 494.5 TFLOP/s at 4096^3"}}},
       {128, 256, 132, "§K.1 [S1-perf] 128x256 tiles (its wave-quantization example), 132 SMs"},
       kNvidiaMemoryEfficiency,
       kNvidiaLaunch,
       hopper_attention(kH100Attention,
                        "§K.3 [FA2] H100 SXM5, FlashAttention (1.x), causal, of 989.4 TFLOP/s")},
      {"h200",
       "NVIDIA H200 SXM 141GB",
       {{bf16, {989.4 * kTFLOP, "§1.1 [S1] 989, the H100's die (989.4 [S1,S2])"}},
        {f16, {989.4 * kTFLOP, "§1.1 [S1] 989, the H100's die (989.4 [S1,S2])"}},
        {f32, {66.9 * kTFLOP, "§1.1 [S1] 67, the H100's die (66.9 [S1,S2])"}}},
       {141 * kGiB, "§1.1 [S1; V-MLPerf] '141 GB' HBM3e"},
       {4800 * kGB, "§1.1 [S1]"},
       "FP8 dense 1,979 TFLOP/s (§1.1 [S1]) has no spmdsim dtype; float32 matmuls run on TF32",
       {{bf16,
         {989.4 * kTFLOP, "§1.1 [S1] the H100's die"},
         {0.803, "§K.1 [MAMF] 'H200 is the same' as H100's 794.5 of 989"}},
        {f16, {989.4 * kTFLOP, "§1.1 [S1] the H100's die"}, {0.803, "assumed: bf16's (§K.1)"}},
        {f32,
         {494.5 * kTFLOP, "§1.1 [S1] TF32 tensor, dense (§K.4)"},
         {0.813, "assumed: H100's TF32 (§K.2 [crowd]), the same die"}}},
       {128, 256, 132, "§K.1 [S1-perf] 128x256 tiles (its wave-quantization example), 132 SMs"},
       kNvidiaMemoryEfficiency,
       kNvidiaLaunch,
       hopper_attention("assumed: H100's FlashAttention-2 TFLOP/s (§K.3 [FA2]), the same die",
                        "assumed: H100's FlashAttention (1.x) TFLOP/s (§K.3 [FA2]), the same die")},
      {"b200",
       "NVIDIA B200 (HGX/DGX, 1000 W)",
       {{bf16, {2250 * kTFLOP, "§1.1 [S1,S3] HGX B200 @1000 W, dense"}},
        {f16, {2250 * kTFLOP, "§1.1 [S1,S3] HGX B200 @1000 W, dense"}},
        {f32, {80 * kTFLOP, "§1.1 [S1,S3]"}}},
       {180 * kGiB, "§1.1 [S1] usable platform figure; 192 GB is also printed"},
       {8000 * kGB, "§1.1 [S1,S3]"},
       "FP8 dense 4,500 TFLOP/s (§1.1 [S1]) has no spmdsim dtype; float32 matmuls run on TF32",
       {{bf16, {2250 * kTFLOP, "§1.1 [S1,S3] dense"}, {0.776, "§K.1 [MAMF] 1745 of 2250 TFLOP/s"}},
        {f16, {2250 * kTFLOP, "§1.1 [S1,S3] dense"}, {0.776, "assumed: bf16's (§K.1)"}},
        {f32,
         {1125 * kTFLOP, "§1.1 [S1] TF32 tensor, dense (§K.4)"},
         {0.776, "assumed: bf16's (§K.1); no TF32 figure published"}}},
       {128, 256, 148, "assumed: 148 SMs (B300's smaller SKU, §K.1 [S1-perf]); 128x256 tiles"},
       kNvidiaMemoryEfficiency,
       kNvidiaLaunch,
       h100_attention(kAssumedAttention)},
      {"tpu_v4",
       "Google TPU v4",
       {{bf16, {275 * kTFLOP, "§1.6 [V-v4]"}}, {f32, {275 * kTFLOP / 64, kTpuVector}}},
       {32 * kGiB, "§1.6 [V-v4] 32 GiB HBM2"},
       {1200 * kGB, "§1.6 [V-v4]"},
       "float32 matmuls run as one bfloat16 MXU pass (JAX's DEFAULT); other float32 work on the VPU",
       tpu_matmul(275 * kTFLOP, "§1.6 [V-v4]", kTpuAssumedEfficiency),
       {128, 128, 8, "§K.5 [P-SB] 128x128 MXUs, 4 per TensorCore, 2 TensorCores (megacore)"},
       kTpuMemoryEfficiency,
       kTpuLaunch,
       h100_attention(kAssumedAttention)},
      {"tpu_v5e",
       "Google TPU v5e",
       {{bf16, {197 * kTFLOP, "§1.6 [V-v5e]"}}, {f32, {197 * kTFLOP / 64, kTpuVector}}},
       {16 * kGiB, "§1.6 [V-v5e] '16 GB' HBM2"},
       {819 * kGB, "§1.6 [V-v5e] older page; a newer page says '800 GiBps'"},
       "int8 393 TOP/s has no spmdsim dtype; float32 matmuls run as one bfloat16 MXU pass",
       tpu_matmul(197 * kTFLOP, "§1.6 [V-v5e]",
                  {0.923, "§K.2 [JAX-Pallas] XLA matmul 181.82 of 197 TFLOP/s at 8192^3"}),
       {128, 128, 4, "§K.5 [P-SB] 128x128 MXUs, 4 per TensorCore, 1 TensorCore"},
       kTpuMemoryEfficiency,
       kTpuLaunch,
       h100_attention(kAssumedAttention)},
      {"tpu_v5p",
       "Google TPU v5p",
       {{bf16, {459 * kTFLOP, "§1.6 [V-v5p]"}}, {f32, {459 * kTFLOP / 64, kTpuVector}}},
       {95 * kGiB, "§1.6 [V-v5p] '95 GB'; a newer page says 95 GiB"},
       {2765 * kGB, "§1.6 [V-v5p]; the newer '2575 GiBps' is the same rate"},
       "float32 matmuls run as one bfloat16 MXU pass (JAX's DEFAULT); other float32 work on the VPU",
       tpu_matmul(459 * kTFLOP, "§1.6 [V-v5p]", kTpuAssumedEfficiency),
       {128, 128, 8, "§K.5 [P-SB] 128x128 MXUs, 4 per TensorCore, 2 TensorCores (megacore)"},
       kTpuMemoryEfficiency,
       kTpuLaunch,
       h100_attention(kAssumedAttention)},
      {"mi300x",
       "AMD Instinct MI300X",
       {{bf16, {1300 * kTFLOP, "§1.7 [S1] dense (AMD's 1307.4 not verified, §7)"}},
        {f16, {1300 * kTFLOP, "§1.7 [S1] dense"}},
        {f32, {163.4 * kTFLOP, "§1.7 [S1] vector"}}},
       {192 * kGiB, "§1.7 [S1] '192 GB' HBM3"},
       {5300 * kGB, "§1.7 [S1]"},
       "FP8 dense 2,610 TFLOP/s (§1.7 [S1]) has no spmdsim dtype",
       {{bf16, {1300 * kTFLOP, "§1.7 [S1] dense"}, {0.514, "§K.1 [MAMF] 668.4 of 1300 TFLOP/s (TunableOp)"}},
        {f16, {1300 * kTFLOP, "§1.7 [S1] dense"}, {0.514, "assumed: bf16's (§K.1)"}},
        {f32,
         {163.4 * kTFLOP, "assumed: the FP32 peak (§1.7 [S1]); no reduced-precision DEFAULT known on ROCm"},
         {0.514, "assumed: bf16's (§K.1)"}}},
       {256, 256, 304, "assumed: 304 compute units, 256x256 macro tiles; not in REFERENCES"},
       {0.81, "§K.6 [MI300X-paper] ~81% of 5.3 TB/s (secondary summaries)"},
       {2 * kMicrosecond, "assumed: the NVIDIA GPUs' 2 us (§K.7)"},
       h100_attention(kAssumedAttention)},
  };
}

// ---------------------------------------------------------------------------------------------------------
// Links, per direction (REFERENCES §0: NVIDIA's headline NVLink figures add both directions).

// NCCL's per-step ring latency over NVLink with its lightest protocol, LL, is 0.6 us (§2.6 [V], tuning.cc
// hwLat): the wire's and the switch's share, which every protocol pays; LL128's and Simple's flags and fences
// add theirs in nccl_ring (docs/collectives.md#protocols). A ring step crosses two links (GPU -> NVSwitch ->
// GPU), so each gets half.
constexpr Figure kNvlinkLatency{0.3 * kMicrosecond,
                                "derived: NCCL hwLat NVLink Ring LL 0.6 us per step (§2.6 [V]) over 2 hops"};

std::vector<LinkPreset> make_links() {
  return {
      {"pcie_gen4_x16",
       "PCIe 4.0 x16 host link, per direction",
       {31.5 * kGB, "§1.4 [S1] 31 GB/s (~31.5)"},
       {0, "left out: no published latency"},
       std::nullopt,
       &pcie_model()},
      {"pcie_gen5_x16",
       "PCIe 5.0 x16 host link, per direction",
       {63 * kGB, "§1.4 [S1]"},
       {0, "left out: no published latency"},
       Figure{55.43 * kGB, "§1.4 [M,S1] H200 node, nvbandwidth H2D (D2H 55.06)"},
       &pcie_model()},
      {"nvlink3",
       "NVLink3, per A100 GPU (12 links), per direction",
       {300 * kGB, "§1.1, §1.2 [S1]"},
       kNvlinkLatency,
       Figure{240 * kGB, "§1.8 [V] NCCL nvlBw SM80 20.0 GB/s x 12 links"},
       &nvlink_model()},
      {"nvlink4",
       "NVLink4, per H100/H200 GPU (18 links), per direction",
       {450 * kGB, "§1.1, §1.2 [S1]"},
       kNvlinkLatency,
       Figure{370.8 * kGB, "§1.8 [V] NCCL nvlBw SM90 20.6 GB/s x 18 links"},
       &nvlink_model()},
      {"nvlink5",
       "NVLink5, per B200 GPU (18 links), per direction",
       {900 * kGB, "§1.1, §1.2 [S1]"},
       kNvlinkLatency,
       Figure{721.8 * kGB, "§1.8 [V] NCCL nvlBw SM100 40.1 GB/s x 18 links"},
       &nvlink_model()},
      {"ib_hdr",
       "InfiniBand HDR 4x port (200 Gb/s), per direction",
       {25 * kGB, "§1.5 [S1]"},
       {0.6 * kMicrosecond, "§1.5 [S1]"},
       std::nullopt,
       &infiniband_model()},
      {"ib_ndr",
       "InfiniBand NDR 4x port (400 Gb/s), per direction",
       {50 * kGB, "§1.5 [S1]"},
       {0.6 * kMicrosecond, "assumed: HDR's 0.6 us (§1.5 [S1]); NDR's is not published"},
       Figure{47 * kGB, "§1.5 [M] 46-48 GB/s per NIC through NCCL (nccl-tests#290), midpoint"},
       &infiniband_model()},
      {"ici_v4",
       "TPU v4 ICI, one link to a neighbour, one way",
       {45 * kGB, "§1.6 [P-SB] 4.5e10 B/s"},
       {1 * kMicrosecond, "§3.4 [P-SB] ~1 us per hop"},
       std::nullopt,
       &ici_model()},
      {"ici_v5e",
       "TPU v5e ICI, one link to a neighbour, one way",
       {45 * kGB, "§1.6 [P-SB] 4.5e10 B/s"},
       {1 * kMicrosecond, "§3.4 [P-SB] ~1 us per hop"},
       std::nullopt,
       &ici_model()},
      {"ici_v5p",
       "TPU v5p ICI, one link to a neighbour, one way",
       {90 * kGB, "§1.6 [P-SB] 9e10 B/s"},
       {1 * kMicrosecond, "§3.4 [P-SB] ~1 us per hop"},
       std::nullopt,
       &ici_model()},
      {"tpu_host_pcie",
       "TPU chip to its host, per direction",
       {15 * kGB, "§1.6 [P-SB] host PCIe ~1.5e10 B/s per chip"},
       {0, "left out: no published latency"},
       std::nullopt,
       &pcie_model()},
      {"xgmi_mi300x",
       "AMD Infinity Fabric (xGMI) between two MI300X, per direction",
       {64 * kGB, "§1.7 [S1] peer-to-peer 64 GB/s per direction"},
       {0, "left out: no published latency"},
       Figure{48 * kGB,
              "§1.7 [V] RCCL's xGMI link bandwidth for gfx94x (ROCm/rccl src/graph/topo.h:33 GFX94X_XGMI_WIDTH), "
              "as NCCL's nvlBw for NVLink; AMD: ~48 GB/s usable per link, 75% of the peak (ROCm blog, "
              "mi300x-rccl-xgmi, 2025-03-02)"},
       &nvlink_model()},
  };
}

// ---------------------------------------------------------------------------------------------------------
// Nodes. The device link of an NVSwitch node is one GPU's whole NVLink port to the switch (all its links).
// The calibration targets are nccl-tests ring all-reduce busbw on the node's 8 GPUs as REFERENCES §1.8 quotes
// them (the §2.2 table it points to is missing from the current REFERENCES.md). The model corrections are
// fitted by `spmdsim calibrate` (docs/calibration.md) and rounded to 3 digits: the simulated ring reduces
// each received chunk after it has arrived, at the device's HBM bandwidth, where NCCL overlaps the reduction
// with the transfer; the correction gives the link back the time that serialised reduction costs, so that
// ring all-reduce busbw matches. Rerun the command when the ring overlaps its reductions: the corrections
// should then fall to about 1 (B200: about 0.94, its measured 680 GB/s being 94% of NCCL's 721.8).

const std::vector<double> kLargeMessages = {1 * kGiB, 4 * kGiB, 16 * kGiB};
// NCCL 2.30.7's figures for its GPU nodes (src/graph/tuning.cc:177-190 llMaxBws and perChMaxRingLL128Bws by
// architecture; the ring graph from search.cc's speed arrays, docs/collectives.md#protocols), GB/s of bus
// bandwidth.
constexpr double kNcclGB = 1e9;
// search.cc:1051-1067, speedArrayIntra per architecture (GB/s a graph channel may carry inside a node).
const std::vector<double> kSearchSpeedsBeforeHopper = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                      9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
const std::vector<double> kSearchSpeedsHopper = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
const std::vector<double> kSearchSpeedsBlackwell = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                    40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
// search.cc:1051-1065, speedArrayInter before SM90, of SM90 and of SM100 (GB/s a graph channel may carry when
// the group spans nodes).
const std::vector<double> kInterSearchSpeedsBeforeHopper = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                            12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                            3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kInterSearchSpeedsHopper = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                      15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kInterSearchSpeedsBlackwell = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                         30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                         6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
std::vector<double> in_bytes(const std::vector<double>& gigabytes) {
  std::vector<double> bytes;
  for (double g : gigabytes) bytes.push_back(g * kNcclGB);
  return bytes;
}
NcclNode nccl_ampere() {
  return {.ring_channels = 24,
          .graph_channels = 12,
          .graph_bandwidth = 20 * kNcclGB,
          .ll_max_bandwidth = {87.7 * kNcclGB, 22.5 * kNcclGB, 19.0 * kNcclGB},  // AMD hosts across nodes
          .ll128_graph_channel_bandwidth = 20 * kNcclGB,
          .nvls_efficiency = 0,
          .nvlink_bandwidth = 12 * 20.0 * kNcclGB,
          .intra_search_speeds = in_bytes(kSearchSpeedsBeforeHopper),
          .inter_search_speeds = in_bytes(kInterSearchSpeedsBeforeHopper),
          .tree_channel_bandwidth = {24.0 * kNcclGB, 23.6 * kNcclGB, 17.8 * kNcclGB},
          .tree_ll128_channel_bandwidth = {20.0 * kNcclGB, 20.0 * kNcclGB, 20.0 * kNcclGB},
          .source = "NCCL 2.30.7: 24 ring channels (logged on HGX A100, nccl-tests#100); ring graph 12 x 20 "
                    "GB/s (search.cc, 12 NVLinks x 20); llMaxBws Ampere, across nodes AMD's (the DGX A100's "
                    "EPYC hosts), perChMaxRingLL128Bws 20, perChMaxTreeBws 24 / 23.6 / 17.8, "
                    "perChMaxTreeLL128Bws 20 (tuning.cc); no NVLS (nvlsEfficiency 0 before Hopper)"};
}
NcclNode nccl_hopper() {
  return {.ring_channels = 24,
          .graph_channels = 12,
          .graph_bandwidth = 30 * kNcclGB,
          .ll_max_bandwidth = {141.0 * kNcclGB, 39.0 * kNcclGB, 20.4 * kNcclGB},  // Intel hosts across nodes
          .ll128_graph_channel_bandwidth = 36.7 * kNcclGB,
          .nvls_efficiency = 0.85,
          .nvlink_bandwidth = 18 * 20.6 * kNcclGB,
          .intra_search_speeds = in_bytes(kSearchSpeedsHopper),
          .inter_search_speeds = in_bytes(kInterSearchSpeedsHopper),
          .nvls_tree_channel_bandwidth = {57.7 * kNcclGB, 45.5 * kNcclGB},
          .nvls_ctas = 16,
          .nvls_tree_ctas = {16, 16, 16},
          .nvls_tree_max_chunk = {128 * kKiB, 128 * kKiB, 64 * kKiB},
          .tree_channel_bandwidth = {38.7 * kNcclGB, 41.4 * kNcclGB, 36.0 * kNcclGB},
          .tree_ll128_channel_bandwidth = {36.7 * kNcclGB, 36.7 * kNcclGB, 29.0 * kNcclGB},
          .source = "NCCL 2.30.7: 24 ring channels (channel ids to 23 logged on H100 nodes, nccl#1259); ring "
                    "graph 12 x 30 GB/s (search.cc SM90 speeds, 18 NVLinks x 20.6 = 370.8); llMaxBws Hopper, "
                    "across nodes Intel's (the DGX H100/H200's Xeon hosts), perChMaxRingLL128Bws 36.7, "
                    "nvlsEfficiency 0.85, perChMaxNVLSTreeBws 57.7 / 45.5, perChMaxTreeBws 38.7 / 41.4 / 36, "
                    "perChMaxTreeLL128Bws 36.7 / 36.7 / 29 (tuning.cc); NVLS and NVLSTree on 16 CTAs, "
                    "NVLSTree's chunks 128 KiB, 64 KiB from 4 nodes (transport/nvls.cc: SM90 CTAs, "
                    "NVLS_CHUNKSIZE, the tree's fallback)"};
}
NcclNode nccl_blackwell() {
  return {.ring_channels = 24,
          .graph_channels = 12,
          .graph_bandwidth = 60 * kNcclGB,
          .ll_max_bandwidth = {282.0 * kNcclGB, 39.0 * kNcclGB, 20.4 * kNcclGB},  // Intel hosts across nodes
          .ll128_graph_channel_bandwidth = 40 * kNcclGB,
          .nvls_efficiency = 0.74,
          .nvlink_bandwidth = 18 * 40.1 * kNcclGB,
          .intra_search_speeds = in_bytes(kSearchSpeedsBlackwell),
          .inter_search_speeds = in_bytes(kInterSearchSpeedsBlackwell),
          .nvls_tree_channel_bandwidth = {96.0 * kNcclGB, 80.0 * kNcclGB},
          .nvls_ctas = 24,
          .nvls_tree_ctas = {32, 24, 24},
          .nvls_tree_max_chunk = {64 * kKiB, 64 * kKiB, 64 * kKiB},
          .nvls_tree_size_correction = true,
          .tree_channel_bandwidth = {70.0 * kNcclGB, 42.8 * kNcclGB, 24.0 * kNcclGB},
          .tree_ll128_channel_bandwidth = {55.6 * kNcclGB, 31.67 * kNcclGB, 20.0 * kNcclGB},
          .source = "NCCL 2.30.7: llMaxBws Blackwell, across nodes Intel's (the DGX B200's Xeon hosts), "
                    "perChMaxRingLL128Bws 40, nvlsEfficiency 0.74, perChMaxNVLSTreeBws 96 / 80 with the tree "
                    "correction per size (x86 hosts), perChMaxTreeBws 70 / 42.8 / 24, perChMaxTreeLL128Bws "
                    "55.6 / 31.67 / 20 (tuning.cc); ring graph 12 x 60 GB/s (SM100 speeds, 18 NVLinks x "
                    "40.1 = 721.8: 12 channels at 60 fit); NVLS on 24 CTAs, NVLSTree on 32 on 2 nodes, 24 on "
                    "more, chunks of 64 KiB (transport/nvls.cc, SM100 tuning: 8 GPUs per node, 400 Gb/s NICs "
                    "behind PCIe switches, 50 GB/s as topo.cc counts them); assumed: Hopper's 24 ring "
                    "channels"};
}

RcclNode rccl_mi300x() {
  return {.bus_bandwidth = 7 * 48 * kNcclGB,
          .msccl_channel_bandwidth = 18.0e9,
          .pxn_min_ranks = 64,
          .source =
              "ROCm/rccl 0cbce2a7: the ring graph of 8 MI300X over their 7 xGMI links, 48 GB/s each "
              "(src/graph/topo.h GFX94X_XGMI_WIDTH), as NCCL's nvlBw x links; PXN off below 64 ranks "
              "on gfx942 (src/rccl_wrap.cc rcclSetPxn; NCCL_PXN_DISABLE defaults to 1 in "
              "src/graph/paths.cc); fitted: the MSCCL "
              "all-pairs channel rate, 18.0 GB/s, to AMD's rccl-tests all-reduce curve from 32 KiB to "
              "16 MiB (ROCm blog mi300x-rccl-xgmi, 2025-03-02, one process per GPU; least squares of the "
              "relative errors; spmdsim calibrate --fit), the other published MI300X curves held out"};
}

constexpr std::string_view kFitted =
    "fitted: spmdsim calibrate, to the published midpoint; gives back the simulated ring's serialised "
    "reduction";

// The DGX A100 with either A100: the same 6 NVSwitches, PCIe and NICs. The 80 GB node's correction is fitted
// on its nccl-tests busbw; the 40 GB node keeps it, its NVLink3 fabric being the same, and shows that
// measurement for comparison (`not_calibrated` says why).
NodePreset dgx_a100(std::string_view name, std::string_view description, std::string_view device,
                    Figure model_correction, std::string_view not_calibrated) {
  return {name,
          description,
          device,
          8,
          "§1.3 [V-HGX] 8 GPUs",
          NodeFabric::nvswitch,
          "§1.3 [V-HGX] each NVSwitch non-blocking, connects all 8 GPUs",
          "nvlink3",
          model_correction,
          "pcie_gen4_x16",
          "§1.1 [S2] PCIe Gen4 x16",
          {0, "not modelled: no published figure"},
          "ib_hdr",
          "assumed: 8 x HDR 200 Gb/s is commonly quoted, not verified (§1.5, §7)",
          &nvlink_model(),
          CalibrationTarget{"ring", kLargeMessages, 230 * kGB, 235 * kGB, "§1.8 [M] nccl-tests ring, 8 A100",
                            not_calibrated},
          nccl_ampere()};
}

std::vector<NodePreset> make_nodes() {
  return {
      dgx_a100("dgx_a100", "NVIDIA DGX A100: 8 x A100 SXM4 80GB, 6 NVSwitch", "a100", {1.172, kFitted}, {}),
      dgx_a100("dgx_a100_40gb", "NVIDIA DGX A100 (320 GB): 8 x A100 SXM4 40GB, 6 NVSwitch", "a100_40gb",
               {1.172, "fitted: dgx_a100's correction, on the same NVLink3 and NVSwitch fabric"},
               "the 80 GB node's measurement, on the same NVLink3 and NVSwitch fabric; none published for the "
               "40 GB node"),
      {"dgx_h100",
       "NVIDIA DGX H100: 8 x H100 SXM5 80GB, 4 NVSwitch",
       "h100",
       8,
       "§1.3 [V] DGX BasePOD RA",
       NodeFabric::nvswitch,
       "§1.3 [V] 4 NVSwitch chips; per-switch link split not found: one non-blocking switch",
       "nvlink4",
       {1.184, kFitted},
       "pcie_gen5_x16",
       "§1.1 [S2] PCIe Gen5 x16",
       {0, "not modelled: no published figure"},
       "ib_ndr",
       "§1.5 [V] 8 x ConnectX-7 400 Gb/s",
       &nvlink_model(),
       CalibrationTarget{"ring", kLargeMessages, 363 * kGB, 368 * kGB,
                         "§1.8 [M] nccl-tests NCCL_ALGO=Ring, 8 H100/H200; maintainer ~370 (nccl-tests#212)"},
       nccl_hopper()},
      {"hgx_h200",
       "NVIDIA HGX H200: 8 x H200 SXM 141GB, 4 NVSwitch",
       "h200",
       8,
       "§1.1 [V-MLPerf] H200-SXM-141GBx8",
       NodeFabric::nvswitch,
       "§1.3 [V] as DGX H100: 4 NVSwitch chips, one non-blocking switch here",
       "nvlink4",
       {1.118, kFitted},
       "pcie_gen5_x16",
       "§1.1 [S1; V-MLPerf] PCIe Gen5 x16",
       {0, "not modelled: no published figure"},
       "ib_ndr",
       "§1.5 [V] DGX H200's 8 x ConnectX-7 400 Gb/s (OEM HGX boards may differ)",
       &nvlink_model(),
       CalibrationTarget{"ring", kLargeMessages, 363 * kGB, 368 * kGB,
                         "§1.8 [M] nccl-tests NCCL_ALGO=Ring, 8 H100/H200; maintainer ~370 (nccl-tests#212)"},
       nccl_hopper()},
      {"dgx_b200",
       "NVIDIA DGX B200: 8 x B200, 2 NVSwitch",
       "b200",
       8,
       "§1.3 [S] DGX B200",
       NodeFabric::nvswitch,
       "§1.3 [S] 2 NVSwitch chips, 14.4 TB/s aggregate: one non-blocking switch",
       "nvlink5",
       {1.089, kFitted},
       "pcie_gen5_x16",
       "assumed: Gen5 x16; the B200 host link generation is not verified (§1.1, §7)",
       {0, "not modelled: no published figure"},
       "ib_ndr",
       "§1.5 [V] 8 x ConnectX-7 400 Gb/s",
       &nvlink_model(),
       CalibrationTarget{"ring", kLargeMessages, 678 * kGB, 682 * kGB, "§1.8 [M] nccl-tests ring, 8 B200"},
       nccl_blackwell()},
      {"mi300x_8gpu",
       "AMD MI300X platform: 8 x MI300X, Infinity Fabric full mesh",
       "mi300x",
       8,
       "§1.7 [S1] 8 GPUs",
       NodeFabric::full_mesh,
       "§1.7 [S1] 8 GPUs directly connected, 7 GPU-facing links each",
       "xgmi_mi300x",
       {1.0, "not calibrated: see the calibration target's reason"},
       "pcie_gen5_x16",
       "assumed: Gen5 x16; REFERENCES gives no MI300X host link",
       {0, "not modelled: no published figure"},
       "ib_ndr",
       "assumed: one NDR 400 Gb/s port per GPU; REFERENCES gives no MI300X-node NIC",
       &nvlink_model(),
       CalibrationTarget{
           "nccl_ring",
           {4 * kGiB},
           312.912 * kGB,
           312.912 * kGB,
           "§1.7 [M,S1] all_reduce_bench.py, 4 GiB, 8 GPUs (one measurement)",
           "RCCL's own link bandwidth, uncorrected, already gives every published rccl-tests curve "
           "within 4% from 64 MiB up (spmdsim calibrate --curves), so no correction is fitted: the "
           "node's rings, one per arc-disjoint cycle of the mesh (RCCL spreads its channels over a GPU's "
           "xGMI links), run at 48 GB/s a link"},
       std::nullopt,
       rccl_mi300x()},
  };
}

// ---------------------------------------------------------------------------------------------------------
// TPU slices.

std::vector<SlicePreset> make_slices() {
  return {
      {"tpu_v4_4x4x4",
       "tpu_v4",
       "ici_v4",
       "tpu_host_pcie",
       {4, 4, 4},
       true,
       "§1.6 [V-v4] 3D torus for slices whose sides are multiples of 4; the 4x4x4 cube",
       &ici_model()},
      {"tpu_v5e_4x4",
       "tpu_v5e",
       "ici_v5e",
       "tpu_host_pcie",
       {4, 4},
       false,
       "§1.6 [V-v5e] 2D; wraparound below the 16x16 pod not verified: modelled as a mesh",
       &ici_model()},
      {"tpu_v5e_16x16",
       "tpu_v5e",
       "ici_v5e",
       "tpu_host_pcie",
       {16, 16},
       true,
       "§1.6 [V-v5e, P-SB] the 256-chip pod, a 2D torus",
       &ici_model()},
      {"tpu_v5p_4x4x4",
       "tpu_v5p",
       "ici_v5p",
       "tpu_host_pcie",
       {4, 4, 4},
       true,
       "§1.6 [V-v5p] 3D torus of 4x4x4 cubes",
       &ici_model()},
  };
}

template <class Preset>
const Preset& find(const std::vector<Preset>& table, std::string_view name, PresetKind kind) {
  for (const auto& p : table)
    if (p.name == name) return p;
  throw ValueError(fmt::format("unknown {} preset '{}'; valid: {}", preset_kind_name(kind), name,
                               fmt::join(preset_names(kind), ", ")));
}

template <class Preset>
std::vector<std::string_view> names_of(const std::vector<Preset>& table) {
  std::vector<std::string_view> names;
  for (const auto& p : table) names.push_back(p.name);
  return names;
}

}  // namespace

DeviceSpec DevicePreset::spec() const {
  DeviceSpec spec;
  spec.model = std::string(model);
  for (const auto& [dtype, figure] : peak_flops) spec.peak_flops[dtype] = figure.value;
  spec.memory_capacity = memory_capacity.value;
  spec.memory_bandwidth = memory_bandwidth.value;
  for (const MatmulFigure& m : matmul) spec.matmul[m.dtype] = {m.peak.value, m.efficiency.value};
  spec.tiling = {tiling.tile_m, tiling.tile_n, tiling.units};
  spec.memory_efficiency = memory_efficiency.value;
  spec.launch_overhead = launch_overhead.value;
  for (const AttentionFigure& a : attention) spec.attention.push_back({a.head_dim, a.points, a.kernel});
  return spec;
}

LinkSpec NodePreset::effective_device_link() const {
  LinkSpec link = link_preset(device_link).effective_spec();
  link.bandwidth *= model_correction.value;
  return link;
}

double NodePreset::calibration_factor() const {
  return effective_device_link().bandwidth / link_preset(device_link).bandwidth.value;
}

CollectiveLibrary NodePreset::collective_library() const {
  Platform built;  // what the node's builder sets of it
  built.nccl = nccl;
  built.rccl = rccl;
  built.full_mesh_nodes = fabric == NodeFabric::full_mesh;
  return spmdsim::collective_library(built);
}

NodeSpec NodePreset::spec() const {
  NodeSpec node;
  node.name = std::string(name);
  node.devices_per_node = devices_per_node;
  node.device = device_preset(device).spec();
  node.fabric = fabric;
  node.device_link = effective_device_link();
  node.host_link = link_preset(host_link).effective_spec();
  node.host_memory_bandwidth = host_memory_bandwidth.value;
  node.nic = link_preset(nic).effective_spec();
  node.nccl = nccl;
  // NCCL's search sees the port's nominal speed, not what its transfers achieve.
  if (node.nccl) node.nccl->nic_speed = link_preset(nic).bandwidth.value;
  node.rccl = rccl;
  return node;
}

std::string_view preset_kind_name(PresetKind kind) {
  switch (kind) {
    case PresetKind::device:
      return "device";
    case PresetKind::link:
      return "link";
    case PresetKind::node:
      return "node";
    case PresetKind::slice:
      return "slice";
  }
  return "?";
}

const std::vector<DevicePreset>& device_presets() {
  static const std::vector<DevicePreset> table = make_devices();
  return table;
}
const std::vector<LinkPreset>& link_presets() {
  static const std::vector<LinkPreset> table = make_links();
  return table;
}
const std::vector<NodePreset>& node_presets() {
  static const std::vector<NodePreset> table = make_nodes();
  return table;
}
const std::vector<SlicePreset>& slice_presets() {
  static const std::vector<SlicePreset> table = make_slices();
  return table;
}

const DevicePreset& device_preset(std::string_view name) {
  return find(device_presets(), name, PresetKind::device);
}
const LinkPreset& link_preset(std::string_view name) {
  return find(link_presets(), name, PresetKind::link);
}
const NodePreset& node_preset(std::string_view name) {
  return find(node_presets(), name, PresetKind::node);
}
const SlicePreset& slice_preset(std::string_view name) {
  return find(slice_presets(), name, PresetKind::slice);
}

std::vector<std::string_view> preset_names(PresetKind kind) {
  switch (kind) {
    case PresetKind::device:
      return names_of(device_presets());
    case PresetKind::link:
      return names_of(link_presets());
    case PresetKind::node:
      return names_of(node_presets());
    case PresetKind::slice:
      return names_of(slice_presets());
  }
  return {};
}

TorusSpec SlicePreset::spec() const {
  TorusSpec spec;
  spec.shape = shape;
  spec.num_devices = 1;
  for (int d : shape) spec.num_devices *= d;
  spec.wraparound = wraparound;
  spec.device = device_preset(device).spec();
  spec.device_link = link_preset(link).effective_spec();
  spec.host_link = link_preset(host_link).effective_spec();
  return spec;
}

PlatformBuilder node_platform(const NodePreset& preset) {
  return accelerator_node(preset.spec()).with_network_config(preset.network_model->simgrid_config);
}
PlatformBuilder slice_platform(const SlicePreset& preset) {
  return torus(preset.spec()).with_network_config(preset.network_model->simgrid_config);
}

}  // namespace spmdsim::topologies
