#include "commands/presets/catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>
#include <utility>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli::presets {
namespace {

using namespace topologies;

std::string gbps(double bytes_per_second) {
  return fmt::format("{:g} GB/s", bytes_per_second / 1e9);
}
std::string microseconds(double seconds) {
  return fmt::format("{:g} us", seconds * 1e6);
}

Row figure_row(std::string key, std::string label, const Figure& f, std::string text, std::string unit) {
  return {std::move(key), std::move(label), std::move(text), f.value, std::move(unit), std::string(f.source)};
}

// Two rows: the model with the reason for it, and the SimGrid settings that select it.
void add_model_rows(std::vector<Row>& rows, const NetworkModel& model) {
  rows.push_back({"network_model", "network model", std::string(model.name), std::nullopt, "",
                  std::string(model.reason)});
  rows.push_back({"simgrid_config", "simgrid settings",
                  fmt::format("{}", fmt::join(model.simgrid_config, " ")), std::nullopt, "", ""});
}

// "512:0.28 1024:0.38 ..." (sequence length: fraction of the bf16 peak).
std::string attention_text(const AttentionFigure& a) {
  std::vector<std::string> points;
  for (const auto& [seq, fraction] : a.points) points.push_back(fmt::format("{}:{:.2f}", seq, fraction));
  return fmt::format("{}", fmt::join(points, " "));
}

// The kernel classes (docs/training.md, "Kernel classes").
void add_kernel_rows(std::vector<Row>& rows, const DevicePreset& d) {
  for (const MatmulFigure& m : d.matmul) {
    const auto dtype = dtype_name(m.dtype);
    const auto short_name = m.dtype == DType::bf16 ? "bf16" : m.dtype == DType::f16 ? "f16" : "f32";
    rows.push_back(figure_row(fmt::format("matmul.{}.peak", dtype), fmt::format("matmul {} peak", short_name),
                              m.peak, fmt::format("{:g} TFLOP/s", m.peak.value / 1e12), "FLOP/s"));
    rows.push_back(figure_row(fmt::format("matmul.{}.efficiency", dtype),
                              fmt::format("matmul {} eff.", short_name), m.efficiency,
                              fmt::format("{:g}", m.efficiency.value), ""));
  }
  rows.push_back({"matmul_tiling", "matmul tiling",
                  fmt::format("{}x{} tiles on {} units", d.tiling.tile_m, d.tiling.tile_n, d.tiling.units),
                  std::nullopt, "", std::string(d.tiling.source)});
  rows.push_back(figure_row("memory_efficiency", "HBM efficiency", d.memory_efficiency,
                            fmt::format("{:g}", d.memory_efficiency.value), ""));
  rows.push_back(figure_row("launch_overhead", "kernel launch", d.launch_overhead,
                            microseconds(d.launch_overhead.value), "s"));
  for (const AttentionFigure& a : d.attention) {
    // FlashAttention-2's rows keep their names; another kernel's say which.
    const auto [key, label] = [&]() -> std::pair<std::string_view, std::string_view> {
      switch (a.kernel) {
        case AttentionKernel::flash2:
          return {"", "attention"};
        case AttentionKernel::flash1:
          return {"fa1.", "fa1 attn"};
        case AttentionKernel::flash_triton:
          return {"triton.", "triton attn"};
      }
      return {"?.", "?"};
    }();
    rows.push_back({fmt::format("attention.{}d{}", key, a.head_dim), fmt::format("{} d{}", label, a.head_dim),
                    attention_text(a), std::nullopt, "", std::string(a.source)});
  }
}

Section devices_section() {
  Section section{"devices", {}};
  for (const auto& d : device_presets()) {
    Entry e{std::string(d.name), std::string(d.model), {}};
    for (const auto& [dtype, figure] : d.peak_flops)
      e.rows.push_back(figure_row(fmt::format("peak_flops.{}", dtype_name(dtype)),
                                  fmt::format("peak {}", dtype_name(dtype)), figure,
                                  fmt::format("{:g} TFLOP/s", figure.value / 1e12), "FLOP/s"));
    e.rows.push_back(figure_row("memory_capacity", "HBM capacity", d.memory_capacity,
                                fmt::format("{:g} GiB", d.memory_capacity.value / (1ull << 30)), "B"));
    e.rows.push_back(figure_row("memory_bandwidth", "HBM bandwidth", d.memory_bandwidth,
                                gbps(d.memory_bandwidth.value), "B/s"));
    add_kernel_rows(e.rows, d);
    e.rows.push_back({"notes", "note", std::string(d.notes), std::nullopt, "", ""});
    section.entries.push_back(std::move(e));
  }
  return section;
}

Section links_section() {
  Section section{"links", {}};
  for (const auto& l : link_presets()) {
    Entry e{std::string(l.name), std::string(l.description), {}};
    e.rows.push_back(figure_row("bandwidth", "bandwidth", l.bandwidth, gbps(l.bandwidth.value), "B/s"));
    if (l.achievable)
      e.rows.push_back(
          figure_row("achievable", "achievable", *l.achievable, gbps(l.achievable->value), "B/s"));
    e.rows.push_back(figure_row("latency", "latency", l.latency, microseconds(l.latency.value), "s"));
    add_model_rows(e.rows, *l.network_model);
    section.entries.push_back(std::move(e));
  }
  return section;
}

// "pcie_gen5_x16: 55.43 GB/s (achievable; nominal 63 GB/s)" or "ib_hdr: 25 GB/s (nominal)".
std::string link_use_text(const LinkPreset& link) {
  if (!link.achievable) return fmt::format("{}: {} (nominal)", link.name, gbps(link.bandwidth.value));
  return fmt::format("{}: {} (achievable; nominal {})", link.name, gbps(link.achievable->value),
                     gbps(link.bandwidth.value));
}

// Why this link, then where its rate comes from.
std::string link_use_source(std::string_view choice_source, const LinkPreset& link) {
  const auto rate = link.achievable ? link.achievable->source : link.bandwidth.source;
  return choice_source.empty() ? std::string(rate) : fmt::format("{}; rate: {}", choice_source, rate);
}

std::string sizes_text(const std::vector<double>& sizes) {
  std::vector<std::string> items;
  for (double s : sizes) items.push_back(fmt::format("{:g}", s / (1ull << 30)));
  return fmt::format("{} GiB", fmt::join(items, ", "));
}

// NCCL's graphs when a group spans nodes: the same from 2 nodes on, the tuner reading the tree's bwIntra on 2
// nodes and bwInter on more.
Row nccl_across_nodes_row(const NcclNode& nccl, int devices_per_node) {
  const NcclNetGraphs graphs = nccl_net_graphs(nccl, devices_per_node, 2);
  return {
      "nccl_across_nodes",
      "NCCL across nodes",
      fmt::format("{} channels ({} graph channels, each twice); ring graph {} x {:g} GB/s; tree graph {} x "
                  "{:g} GB/s inside nodes, {:g} across",
                  graphs.call_channels, graphs.graph_channels, graphs.graph_channels, graphs.ring_speed / 1e9,
                  graphs.graph_channels, graphs.tree_intra / 1e9, graphs.tree_inter / 1e9),
      static_cast<double>(graphs.call_channels),
      "",
      "NCCL 2.30.7 search.cc:1051-1065, 1150-1290 (one graph channel per NIC, at the fastest inter-node "
      "speed it carries), 1279-1283 (the tree's bwIntra), connect.cc:460 (each graph channel twice); "
      "docs/collectives.md#channels-across-nodes"};
}

Section nodes_section() {
  Section section{"nodes", {}};
  for (const auto& n : node_presets()) {
    const auto& device_link = link_preset(n.device_link);
    const auto& host_link = link_preset(n.host_link);
    const auto& nic = link_preset(n.nic);
    const LinkSpec simulated = n.effective_device_link();
    Entry e{std::string(n.name), std::string(n.description), {}};
    e.rows.push_back({"devices", "devices", fmt::format("{} x {}", n.devices_per_node, n.device),
                      static_cast<double>(n.devices_per_node), "", std::string(n.devices_source)});
    e.rows.push_back({"fabric", "fabric", n.fabric == NodeFabric::nvswitch ? "nvswitch" : "full mesh",
                      std::nullopt, "", std::string(n.fabric_source)});
    e.rows.push_back({"device_link", "device link", link_use_text(device_link),
                      device_link.effective_spec().bandwidth, "B/s", link_use_source("", device_link)});
    e.rows.push_back(figure_row("model_correction", "model correction", n.model_correction,
                                fmt::format("{:g}", n.model_correction.value), ""));
    e.rows.push_back({"simulated_device_link", "simulated link",
                      fmt::format("{:.1f} GB/s, {} ({:.3f} x nominal)", simulated.bandwidth / 1e9,
                                  microseconds(simulated.latency), n.calibration_factor()),
                      simulated.bandwidth, "B/s", "derived: device link x model correction"});
    e.rows.push_back({"host_link", "host link", link_use_text(host_link),
                      host_link.effective_spec().bandwidth, "B/s",
                      link_use_source(n.host_link_source, host_link)});
    e.rows.push_back(figure_row("host_memory_bandwidth", "host memory bw", n.host_memory_bandwidth,
                                n.host_memory_bandwidth.value > 0 ? gbps(n.host_memory_bandwidth.value) : "-",
                                "B/s"));
    e.rows.push_back({"nic", "NIC per device", link_use_text(nic), nic.effective_spec().bandwidth, "B/s",
                      link_use_source(n.nic_source, nic)});
    if (n.nccl) {
      const auto& nccl = *n.nccl;
      e.rows.push_back({"nccl", "NCCL's figures",
                        fmt::format("{} ring channels; ring graph {} x {:g} GB/s; LL cap {:g}/{:g}/{:g} GB/s "
                                    "(1/2/3+ nodes); LL128 cap {:g} GB/s per graph channel; {}",
                                    nccl.ring_channels, nccl.graph_channels, nccl.graph_bandwidth / 1e9,
                                    nccl.ll_max_bandwidth[0] / 1e9, nccl.ll_max_bandwidth[1] / 1e9,
                                    nccl.ll_max_bandwidth[2] / 1e9, nccl.ll128_graph_channel_bandwidth / 1e9,
                                    nccl.nvls_efficiency > 0
                                        ? fmt::format("NVLS at {:g} of {:g} GB/s of NVLink per GPU",
                                                      nccl.nvls_efficiency, nccl.nvlink_bandwidth / 1e9)
                                        : std::string("no NVLS")),
                        static_cast<double>(nccl.ring_channels), "", nccl.source});
      e.rows.push_back(nccl_across_nodes_row(*platform_nccl(n.spec()), n.devices_per_node));
    }
    if (n.rccl)
      e.rows.push_back({"rccl", "RCCL's figures",
                        fmt::format("ring graph {:g} GB/s; Ring LL and Simple at RCCL's latencies and shares "
                                    "(tuning model 5), no LL128; MSCCL all-pairs up to 16 MiB, {:g} GB/s per "
                                    "channel",
                                    n.rccl->bus_bandwidth / 1e9, n.rccl->msccl_channel_bandwidth / 1e9),
                        n.rccl->bus_bandwidth, "B/s", n.rccl->source});
    add_model_rows(e.rows, *n.network_model);
    if (n.calibration) {
      const auto& c = *n.calibration;
      const std::string range = c.busbw_low == c.busbw_high
                                    ? fmt::format("{:g}", c.busbw_low / 1e9)
                                    : fmt::format("{:g}-{:g}", c.busbw_low / 1e9, c.busbw_high / 1e9);
      e.rows.push_back(
          {"calibration", c.not_calibrated.empty() ? "calibrated to" : "compared with",
           fmt::format("{} all-reduce busbw {} GB/s at {}", c.algorithm, range, sizes_text(c.sizes)),
           c.midpoint(), "B/s", std::string(c.source)});
      if (!c.not_calibrated.empty())
        e.rows.push_back(
            {"not_calibrated", "not calibrated", std::string(c.not_calibrated), std::nullopt, "", ""});
    }
    section.entries.push_back(std::move(e));
  }
  return section;
}

Section slices_section() {
  Section section{"slices", {}};
  for (const auto& s : slice_presets()) {
    const auto& link = link_preset(s.link);
    const auto& host_link = link_preset(s.host_link);
    int chips = 1;
    for (int d : s.shape) chips *= d;
    Entry e{std::string(s.name), fmt::format("{} slice", device_preset(s.device).model), {}};
    e.rows.push_back(
        {"chips", "chips", fmt::format("{} x {}", chips, s.device), static_cast<double>(chips), "", ""});
    e.rows.push_back({"shape", "shape",
                      fmt::format("{} {}", fmt::join(s.shape, "x"), s.wraparound ? "torus" : "mesh"),
                      std::nullopt, "", std::string(s.shape_source)});
    e.rows.push_back({"link", "link",
                      fmt::format("{}: {}, {} per hop", s.link, gbps(link.bandwidth.value),
                                  microseconds(link.latency.value)),
                      link.bandwidth.value, "B/s", std::string(link.bandwidth.source)});
    e.rows.push_back({"host_link", "host link", link_use_text(host_link),
                      host_link.effective_spec().bandwidth, "B/s", std::string(host_link.bandwidth.source)});
    add_model_rows(e.rows, *s.network_model);
    e.rows.push_back({"builder", "builder", "torus (topologies/torus.hpp)", std::nullopt, "", ""});
    section.entries.push_back(std::move(e));
  }
  return section;
}

}  // namespace

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> all = {{"devices", &devices_section},
                                        {"links", &links_section},
                                        {"nodes", &nodes_section},
                                        {"slices", &slices_section}};
  return all;
}

}  // namespace spmdsim::cli::presets
