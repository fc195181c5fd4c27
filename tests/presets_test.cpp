// The preset table (topologies/presets.hpp): every figure has a source, lookups fail with the valid names,
// the specs the presets make are valid and build, and `spmdsim presets` (the built program, SPMDSIM_CLI)
// prints the table of tests/golden/presets.txt, writes JSON, and refuses bad input with status 2.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim {
namespace {

namespace fs = std::filesystem;
using namespace topologies;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A source says where a number comes from: a REFERENCES.md section, or how it was derived, assumed or why
// it is left out.
bool is_source(std::string_view source) {
  for (std::string_view start :
       {"§", "derived: ", "assumed: ", "left out: ", "not modelled: ", "fitted: ", "not calibrated: "})
    if (source.starts_with(start)) return true;
  return false;
}

void expect_sourced(const Figure& figure, const std::string& what) {
  EXPECT_TRUE(is_source(figure.source)) << what << ": '" << figure.source << "'";
}

TEST(PresetTable, EveryFigureHasASource) {
  for (const auto& d : device_presets()) {
    EXPECT_FALSE(d.peak_flops.empty()) << d.name;
    for (const auto& [dtype, figure] : d.peak_flops) expect_sourced(figure, fmt::format("{} peak", d.name));
    expect_sourced(d.memory_capacity, fmt::format("{} memory", d.name));
    expect_sourced(d.memory_bandwidth, fmt::format("{} bandwidth", d.name));
    for (const auto& m : d.matmul) {
      expect_sourced(m.peak, fmt::format("{} matmul peak", d.name));
      expect_sourced(m.efficiency, fmt::format("{} matmul efficiency", d.name));
    }
    EXPECT_TRUE(is_source(d.tiling.source)) << d.name;
    expect_sourced(d.memory_efficiency, fmt::format("{} memory efficiency", d.name));
    expect_sourced(d.launch_overhead, fmt::format("{} launch", d.name));
    for (const auto& a : d.attention) EXPECT_TRUE(is_source(a.source)) << d.name;
  }
  for (const auto& l : link_presets()) {
    expect_sourced(l.bandwidth, std::string(l.name));
    expect_sourced(l.latency, std::string(l.name));
    if (l.achievable) expect_sourced(*l.achievable, std::string(l.name));
    EXPECT_FALSE(l.network_model->reason.empty()) << l.name;
  }
  for (const auto& n : node_presets()) {
    for (auto source : {n.devices_source, n.fabric_source, n.host_link_source, n.nic_source})
      EXPECT_TRUE(is_source(source)) << n.name << ": '" << source << "'";
    expect_sourced(n.model_correction, std::string(n.name));
    expect_sourced(n.host_memory_bandwidth, std::string(n.name));
    ASSERT_TRUE(n.calibration) << n.name;
    EXPECT_TRUE(is_source(n.calibration->source)) << n.name;
  }
  for (const auto& s : slice_presets()) EXPECT_TRUE(is_source(s.shape_source)) << s.name;
}

TEST(PresetTable, NamesAreInPresentationOrder) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(preset_names(PresetKind::device),
            (V{"a100", "a100_40gb", "h100", "h200", "b200", "tpu_v4", "tpu_v5e", "tpu_v5p", "mi300x"}));
  EXPECT_EQ(preset_names(PresetKind::node),
            (V{"dgx_a100", "dgx_a100_40gb", "dgx_h100", "hgx_h200", "dgx_b200", "mi300x_8gpu"}));
  EXPECT_EQ(preset_names(PresetKind::slice),
            (V{"tpu_v4_4x4x4", "tpu_v5e_4x4", "tpu_v5e_16x16", "tpu_v5p_4x4x4"}));
  // Every name a node or slice refers to is a preset of its kind.
  for (const auto& n : node_presets()) {
    EXPECT_NO_THROW(device_preset(n.device));
    EXPECT_NO_THROW(link_preset(n.device_link));
    EXPECT_NO_THROW(link_preset(n.host_link));
    EXPECT_NO_THROW(link_preset(n.nic));
  }
  for (const auto& s : slice_presets()) {
    EXPECT_NO_THROW(device_preset(s.device));
    EXPECT_NO_THROW(link_preset(s.link));
    EXPECT_NO_THROW(link_preset(s.host_link));
  }
}

template <class Lookup>
void expect_value_error(Lookup lookup, const std::string& message) {
  try {
    lookup();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(PresetLookup, UnknownNamesListTheValidOnes) {
  expect_value_error(
      [] { device_preset("a10"); },
      "unknown device preset 'a10'; valid: a100, a100_40gb, h100, h200, b200, tpu_v4, tpu_v5e, tpu_v5p, "
      "mi300x");
  expect_value_error(
      [] { link_preset("nvlink2"); },
      "unknown link preset 'nvlink2'; valid: pcie_gen4_x16, pcie_gen5_x16, nvlink3, nvlink4, nvlink5, "
      "ib_hdr, ib_ndr, ici_v4, ici_v5e, ici_v5p, tpu_host_pcie, xgmi_mi300x");
  expect_value_error(
      [] { node_preset("dgx_a100 "); },
      "unknown node preset 'dgx_a100 '; valid: dgx_a100, dgx_a100_40gb, dgx_h100, hgx_h200, dgx_b200, "
      "mi300x_8gpu");
  expect_value_error(
      [] { slice_preset("tpu_v4"); },
      "unknown slice preset 'tpu_v4'; valid: tpu_v4_4x4x4, tpu_v5e_4x4, tpu_v5e_16x16, tpu_v5p_4x4x4");
}

TEST(DevicePresets, ConvertUnitsAtTheBoundary) {
  const DeviceSpec a100 = device_preset("a100").spec();
  EXPECT_EQ(a100.model, "NVIDIA A100 SXM4 80GB");
  EXPECT_EQ(a100.peak_flops.at(DType::bf16), 312e12);
  EXPECT_EQ(a100.peak_flops.at(DType::f32), 19.5e12);
  EXPECT_EQ(a100.memory_capacity, 80 * kGiB);  // "80 GB" of HBM is GiB (REFERENCES §0)
  EXPECT_EQ(a100.memory_bandwidth, 2039e9);
  EXPECT_EQ(a100.launch_overhead, 2e-6);
  EXPECT_EQ(a100.matmul.at(DType::bf16).efficiency, 0.869);
  EXPECT_EQ(device_preset("h200").spec().memory_capacity, 141 * kGiB);
  EXPECT_EQ(device_preset("tpu_v5p").spec().memory_bandwidth, 2765e9);
  // No float16 peak is published for TPUs: it is left out, not guessed (float32 is the VPU's, derived).
  EXPECT_EQ(device_preset("tpu_v4").spec().peak_flops.count(DType::f16), 0u);
  for (const auto& d : device_presets()) EXPECT_NO_THROW(d.spec().validate()) << d.name;
}

TEST(NodePresets, DeviceLinkIsTheAchievableRateTimesTheModelCorrection) {
  for (const auto& n : node_presets()) {
    const auto& link = link_preset(n.device_link);
    const double achievable = link.achievable ? link.achievable->value : link.bandwidth.value;
    EXPECT_DOUBLE_EQ(n.effective_device_link().bandwidth, achievable * n.model_correction.value) << n.name;
    EXPECT_DOUBLE_EQ(n.calibration_factor(), n.effective_device_link().bandwidth / link.bandwidth.value)
        << n.name;
    const NodeSpec spec = n.spec();
    EXPECT_EQ(spec.device_link.bandwidth, n.effective_device_link().bandwidth) << n.name;
    EXPECT_EQ(spec.devices_per_node, 8) << n.name;
    EXPECT_NO_THROW(accelerator_node(spec)) << n.name;
  }
  // NCCL's effective NVLink rates (REFERENCES §1.8) are the achievable figures the corrections start from.
  EXPECT_EQ(link_preset("nvlink3").achievable->value, 240e9);
  EXPECT_EQ(link_preset("nvlink4").achievable->value, 370.8e9);
  EXPECT_EQ(link_preset("nvlink5").achievable->value, 721.8e9);
  EXPECT_EQ(node_preset("dgx_h100").spec().nic.bandwidth,
            47e9);  // NDR through NCCL, not the 50 GB/s line rate
}

// RCCL keeps PXN off on MI300X communicators of fewer than 64 ranks: a cluster of them reaches other rails
// over spines at the NICs' rate, from 64 ranks over the node fabric as NCCL's nodes always do.
TEST(NodePresets, ClustersCrossRailsAsTheirLibraryDoes) {
  const NodeSpec mi300x = node_preset("mi300x_8gpu").spec();
  for (const int nodes : {2, 7}) {
    const MultiNodeSpec spec = library_cluster_spec(mi300x, nodes);
    EXPECT_EQ(spec.rail_crossing, RailCrossing::spine) << nodes;
    EXPECT_EQ(spec.switch_link.bandwidth, mi300x.nic.bandwidth) << nodes;
    EXPECT_EQ(multi_node_route(spec, 3, 13),
              (std::vector<std::string>{"node0.dev3.nic.up", "rail3-spine1.up", "rail5-spine1.down",
                                        "node1.dev5.nic.down"}));
  }
  EXPECT_EQ(library_cluster_spec(mi300x, 8).rail_crossing, RailCrossing::nvlink_first);
  for (const int nodes : {2, 8})
    EXPECT_EQ(library_cluster_spec(node_preset("dgx_h100").spec(), nodes).rail_crossing,
              RailCrossing::nvlink_first);
}

TEST(NodePresets, RunUnderTheAlphaBetaModel) {
  // No preset is TCP: every one runs CM02 without cross-traffic or TCP window (docs/presets.md says why).
  for (const auto& n : node_presets())
    EXPECT_EQ(n.network_model->simgrid_config, alpha_beta_config()) << n.name;
  for (const auto& l : link_presets())
    EXPECT_EQ(l.network_model->simgrid_config, alpha_beta_config()) << l.name;
}

// Each preset platform builds (each test runs in its own process, so each has its own engine).
class NodePlatform : public ::testing::TestWithParam<std::string> {};

TEST_P(NodePlatform, Builds) {
  const auto& preset = node_preset(GetParam());
  Simulation sim(node_platform(preset), {preset.network_model->simgrid_config, {}});
  EXPECT_EQ(sim.num_devices(), preset.devices_per_node);
  EXPECT_EQ(sim.platform().devices[0].spec.model, device_preset(preset.device).model);
  EXPECT_EQ(sim.platform().dimensions, std::vector<int>{preset.devices_per_node});
}

INSTANTIATE_TEST_SUITE_P(Presets, NodePlatform,
                         ::testing::Values("dgx_a100", "dgx_a100_40gb", "dgx_h100", "hgx_h200", "dgx_b200",
                                           "mi300x_8gpu"));

class SlicePlatform : public ::testing::TestWithParam<std::string> {};

TEST_P(SlicePlatform, BuildsItsTorus) {
  const auto& preset = slice_preset(GetParam());
  Simulation sim(slice_platform(preset), {preset.network_model->simgrid_config, {}});
  int chips = 1;
  for (int d : preset.shape) chips *= d;
  EXPECT_EQ(sim.num_devices(), chips);
  EXPECT_EQ(sim.platform().dimensions, preset.shape);
}

INSTANTIATE_TEST_SUITE_P(Presets, SlicePlatform,
                         ::testing::Values("tpu_v4_4x4x4", "tpu_v5e_4x4", "tpu_v5e_16x16", "tpu_v5p_4x4x4"));

// ---------------------------------------------------------------------------------------------------------
// `spmdsim presets`.

using testing::expect_matches_golden;
using testing::read_file;
using testing::scratch_dir;

testing::CliRun run_presets(const std::string& args, const fs::path& dir) {
  return testing::run_cli(SPMDSIM_CLI, "presets", args, dir);
}

TEST(PresetsCommand, TableMatchesGoldenFile) {
  const auto run = run_presets("", scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  expect_matches_golden(run.out, "presets.txt");
}

// `spmdsim kernels`: the presets' kernel classes against the published GEMM and streaming points.
TEST(KernelsCommand, TableMatchesGoldenFile) {
  const auto run = testing::run_cli(SPMDSIM_CLI, "kernels", "", scratch_dir());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  expect_matches_golden(run.out, "kernels.txt");
}

TEST(KernelsCommand, RefusesAnUnknownOption) {
  const auto run = testing::run_cli(SPMDSIM_CLI, "kernels", "--device a100", scratch_dir());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("device"), std::string::npos) << run.err;
}

TEST(PresetsCommand, KindSelectsOneSection) {
  const auto dir = scratch_dir();
  const auto all = run_presets("", dir).out;
  for (std::string kind : {"devices", "links", "nodes", "slices"}) {
    const auto run = run_presets("--kind " + kind, dir);
    ASSERT_EQ(run.status, 0) << run.err;
    // The section as the full table prints it, after the same header.
    const auto body = run.out.substr(run.out.find("\n\n") + 2);
    EXPECT_NE(all.find(body), std::string::npos) << kind;
    EXPECT_TRUE(body.starts_with(kind + "\n")) << body.substr(0, 40);
  }
}

TEST(PresetsCommand, JsonHasEveryPresetWithValuesAndSources) {
  const auto dir = scratch_dir();
  const auto run = run_presets(fmt::format("--json '{}'", (dir / "presets.json").string()), dir);
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = nlohmann::json::parse(read_file(dir / "presets.json"));
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("devices").size(), device_presets().size());
  EXPECT_EQ(j.at("links").size(), link_presets().size());
  EXPECT_EQ(j.at("nodes").size(), node_presets().size());
  EXPECT_EQ(j.at("slices").size(), slice_presets().size());
  const auto& a100 = j.at("devices").at(0);
  EXPECT_EQ(a100.at("name"), "a100");
  const auto& bf16 = a100.at("figures").at(0);
  EXPECT_EQ(bf16.at("key"), "peak_flops.bfloat16");
  EXPECT_EQ(bf16.at("value"), 312e12);
  EXPECT_EQ(bf16.at("unit"), "FLOP/s");
  EXPECT_EQ(bf16.at("source"), "§1.1 [S1,S2] dense tensor");
}

TEST(PresetsCommand, BadKindExitsTwoWithTheValidChoices) {
  const auto run = run_presets("--kind gpus", scratch_dir());
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "spmdsim presets: unknown --kind 'gpus'; valid: devices, links, nodes, slices\n"
            "(see spmdsim presets --help)\n");
}

TEST(PresetsCommand, UnknownOptionExitsTwo) {
  const auto run = run_presets("--devices 8", scratch_dir());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("unrecognised option '--devices'"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace spmdsim
