// Presets: the accelerators, links, nodes and TPU slices users rent, as one table of published figures
// (topologies/src/presets.cpp). Every number carries its source: a section and provenance tag of
// ../shared/REFERENCES.md ("§1.1 [S1,S2]"), or "derived: ..." (computed from such figures), or
// "assumed: ..." (no published figure; the reason is given). A figure REFERENCES.md does not have is left
// out rather than guessed. docs/presets.md explains the choices; `spmdsim presets` prints the table.
//
// Units are SI throughout (bytes, B/s, FLOP/s, seconds); memory capacities are GiB (2^30 B) because that is
// what vendors mean by "GB" of HBM (REFERENCES §0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/device_spec.hpp"
#include "spmdsim/dtype.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/link_spec.hpp"
#include "spmdsim/topologies/torus.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::topologies {

// One number of a preset and where it comes from.
struct Figure {
  double value = 0;
  std::string_view source;
};

// The SimGrid network model a preset runs under, and why. One simulation has one model for all its links,
// so a node preset's model is the model of every platform built from it.
struct NetworkModel {
  std::string_view name;                    // "CM02" (short, for tables)
  std::vector<std::string> simgrid_config;  // settings for SimulationOptions::simgrid_config
  std::string_view reason;                  // one line
};

// The matrix unit's rate for one operand dtype (DeviceSpec::matmul).
struct MatmulFigure {
  DType dtype;
  Figure peak;        // FLOP/s of the unit JAX's DEFAULT precision runs these operands on
  Figure efficiency;  // achieved fraction of `peak` at the best (large) shape
};

// Output tiles and the units that run them in waves (DeviceSpec::tiling).
struct TilingFigure {
  std::int64_t tile_m = 0;
  std::int64_t tile_n = 0;
  int units = 0;
  std::string_view source;
};

// Fused attention, forward + backward, causal, at one head dimension: achieved fraction of the bf16 matmul
// peak by sequence length (DeviceSpec::attention).
struct AttentionFigure {
  std::int64_t head_dim = 0;
  std::vector<std::pair<std::int64_t, double>> points;  // (seq, fraction of the bf16 peak)
  std::string_view source;
  AttentionKernel kernel = AttentionKernel::flash2;
};

struct DevicePreset {
  std::string_view name;   // "a100"
  std::string_view model;  // "NVIDIA A100 SXM4 80GB"
  std::vector<std::pair<DType, Figure>>
      peak_flops;           // dense vector-unit peak, FLOP/s; a dtype left out has no published figure
  Figure memory_capacity;   // bytes
  Figure memory_bandwidth;  // B/s
  std::string_view notes;
  // The kernel classes (docs/training.md, "Kernel classes"): one matmul rate per dtype of peak_flops.
  std::vector<MatmulFigure> matmul;
  TilingFigure tiling;
  Figure memory_efficiency;  // achieved fraction of memory_bandwidth
  Figure launch_overhead;    // seconds per kernel
  std::vector<AttentionFigure> attention;

  // The engine's view.
  DeviceSpec spec() const;
};

struct LinkPreset {
  std::string_view name;             // "nvlink4"
  std::string_view description;      // what one preset link is: "NVLink4, per H100/H200 GPU, per direction"
  Figure bandwidth;                  // nominal, per direction, B/s
  Figure latency;                    // seconds; value 0 with its reason when no figure was published
  std::optional<Figure> achievable;  // measured or NCCL-effective rate, B/s, where one is published
  const NetworkModel* network_model;

  LinkSpec spec() const { return {bandwidth.value, latency.value}; }  // nominal
  // What node presets use: the achievable rate where one is published, the nominal one otherwise.
  LinkSpec effective_spec() const {
    return {achievable ? achievable->value : bandwidth.value, latency.value};
  }
};

// What a node preset's all-reduce is calibrated against (docs/calibration.md, `spmdsim calibrate`).
struct CalibrationTarget {
  std::string_view algorithm;  // the registered all_reduce algorithm that matches the measurement
  std::vector<double> sizes;   // message sizes S in bytes at which the measurement holds
  double busbw_low = 0;        // published busbw range, B/s (nccl-tests' busbw, 1e9 B/s units)
  double busbw_high = 0;
  std::string_view source;
  // Empty: the preset is calibrated to this figure (tests hold it within tolerance). Otherwise why not: the
  // figure is then shown for comparison only.
  std::string_view not_calibrated;
  double midpoint() const { return (busbw_low + busbw_high) / 2; }
};

struct NodePreset {
  std::string_view name;         // "dgx_a100"
  std::string_view description;  // "NVIDIA DGX A100: 8 x A100 SXM4 80GB on 6 NVSwitch"
  std::string_view device;       // a device preset
  int devices_per_node = 8;
  std::string_view devices_source;
  NodeFabric fabric = NodeFabric::nvswitch;
  std::string_view fabric_source;
  // Every link of a node runs at its link preset's effective_spec(): the published achievable rate (NCCL's
  // nvlBw x links for NVLink, REFERENCES §1.8; measured rates for PCIe and IB) where there is one. The device
  // link is further scaled by model_correction: what the simulator's own simplifications cost, fitted by
  // `spmdsim calibrate` against published busbw (1: none). docs/calibration.md says what it compensates.
  std::string_view device_link;  // a link preset
  Figure model_correction;
  std::string_view host_link;  // a link preset
  std::string_view host_link_source;
  Figure host_memory_bandwidth;  // B/s; 0: not modelled (no published figure)
  std::string_view nic;          // a link preset
  std::string_view nic_source;
  const NetworkModel* network_model;
  std::optional<CalibrationTarget> calibration;
  std::optional<NcclNode> nccl;  // NCCL's figures for the node, where NCCL drives it
  std::optional<RcclNode> rccl;  // RCCL's figures for the node, where RCCL drives it

  // The simulated device link: the link preset's effective rate x model_correction.
  LinkSpec effective_device_link() const;
  // The simulated device link's bandwidth over the link preset's nominal one.
  double calibration_factor() const;
  NodeSpec spec() const;
  // What runs the node's collectives by default (collective_library of the platform it builds): NCCL where
  // it carries NCCL's figures, channel rings on a full mesh, else the textbook algorithms.
  CollectiveLibrary collective_library() const;
};

// A TPU slice: a torus of chips, each chip's ICI links to its neighbours.
struct SlicePreset {
  std::string_view name;  // "tpu_v4_4x4x4"
  std::string_view device;
  std::string_view link;       // per cable between neighbours, per direction
  std::string_view host_link;  // per chip
  std::vector<int> shape;
  bool wraparound = true;  // a torus; false: a mesh
  std::string_view shape_source;
  const NetworkModel* network_model;

  TorusSpec spec() const;
};

enum class PresetKind { device, link, node, slice };
inline constexpr PresetKind kAllPresetKinds[] = {PresetKind::device, PresetKind::link, PresetKind::node,
                                                 PresetKind::slice};
std::string_view preset_kind_name(PresetKind kind);  // "device", "link", "node", "slice"

// The tables, in presentation order.
const std::vector<DevicePreset>& device_presets();
const std::vector<LinkPreset>& link_presets();
const std::vector<NodePreset>& node_presets();
const std::vector<SlicePreset>& slice_presets();

// Lookups by name; an unknown name throws ValueError "unknown device preset 'x'; valid: a100, h100, ...".
const DevicePreset& device_preset(std::string_view name);
const LinkPreset& link_preset(std::string_view name);
const NodePreset& node_preset(std::string_view name);
const SlicePreset& slice_preset(std::string_view name);
std::vector<std::string_view> preset_names(PresetKind kind);

// The presets' platforms: accelerator_node(preset.spec()), torus(preset.spec()), carrying the preset's
// network_model->simgrid_config (PlatformBuilder::network_config).
PlatformBuilder node_platform(const NodePreset& preset);
PlatformBuilder slice_platform(const SlicePreset& preset);

}  // namespace spmdsim::topologies
