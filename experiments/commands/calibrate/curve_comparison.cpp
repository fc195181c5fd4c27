#include "commands/calibrate/curve_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "common/simulation_start.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/accelerator_node.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli {
namespace {

std::string percent(double fraction) {
  return fmt::format("{:+.1f}%", 100 * fraction);
}

// The traced collective's name in the report and the call itself, on this rank's float32 shapes.
struct Call {
  const char* name;
  std::int64_t elements;  // per rank, in the call
  double bytes;           // nccl-tests' S for that count
};

Call call_for(const std::string& collective, double bytes, int n) {
  const auto floats = static_cast<std::int64_t>(bytes / 4);
  if (collective == "all_reduce")
    return {"psum", std::max<std::int64_t>(floats, 1), 4.0 * std::max<std::int64_t>(floats, 1)};
  const std::int64_t per_rank = std::max<std::int64_t>(floats / n, 1);
  if (collective == "all_gather") return {"all_gather", per_rank, 4.0 * per_rank * n};
  if (collective == "reduce_scatter") return {"psum_scatter", per_rank * n, 4.0 * per_rank * n};
  throw std::invalid_argument(fmt::format("published curve of an unknown collective '{}'", collective));
}

// The channels the curve's run had on `node`: the library's for its shape, or as many as NCCL_MIN_CTAS=N in
// its NCCL setting asked for, to which NCCL copies its channels (src/graph/connect.cc:503-505).
int curve_channels(const PublishedCurve& curve, const topologies::NodePreset& node) {
  const auto nccl = topologies::platform_nccl(node.spec());
  const int channels =
      default_ring_channels(nccl ? &*nccl : nullptr, node.fabric == topologies::NodeFabric::full_mesh,
                            curve.devices / curve.nodes, curve.nodes);
  constexpr std::string_view kMinCtas = "NCCL_MIN_CTAS=";
  const auto at = curve.nccl_algorithm.find(kMinCtas);
  if (at == std::string::npos) return channels;
  return std::max(channels, std::stoi(curve.nccl_algorithm.substr(at + kMinCtas.size())));
}

// What nccl_ring or nccl runs one point on (NCCL's or RCCL's algorithm, protocol and channels, as
// NCCL_DEBUG prints them), or "-" for another algorithm or a preset without either library's figures.
std::string simulated_as(const CurveComparison& c, double bytes) {
  const auto& node = topologies::node_preset(c.curve->preset);
  const auto nccl = topologies::platform_nccl(node.spec());
  const int n = c.curve->devices;
  if ((c.algorithm == "nvls" || c.algorithm == "nvls_tree") && nccl)
    return fmt::format("{} Simple x {}", c.algorithm == "nvls" ? "NVLS" : "NVLSTree",
                       nccl_nvls_ctas(*nccl, n / c.curve->nodes, c.curve->nodes));
  if ((c.algorithm != "nccl_ring" && c.algorithm != "nccl") || (!nccl && !node.rccl)) return "-";
  const Call call = call_for(c.curve->collective, bytes, n);
  const auto kind = parse_collective_kind(c.curve->collective);
  const std::int64_t per_rank = kind == CollectiveKind::all_gather ? call.elements : call.elements / n;
  const std::vector<int> dimensions =
      c.curve->nodes == 1 ? std::vector<int>{n} : std::vector<int>{n / c.curve->nodes, c.curve->nodes};
  // Each node's switch reduces where the preset's does (topologies' node_shape).
  const bool switches_reduce = node.fabric == topologies::NodeFabric::nvswitch;
  const int channels = curve_channels(*c.curve, node);
  const auto choice =
      nccl ? nccl_choice(*nccl, c.algorithm, kind, dimensions, per_rank, 4, channels, "", switches_reduce)
           : rccl_choice(*node.rccl, c.algorithm, kind, dimensions, per_rank, 4, channels, "");
  return fmt::format("{} {} x {}", choice.algorithm, choice.protocol, choice.channels);
}

}  // namespace

std::string size_text(double bytes) {
  for (auto [unit, scale] : {std::pair{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}})
    if (bytes >= scale) return fmt::format("{:g} {}", bytes / scale, unit);
  return fmt::format("{:g} B", bytes);
}

double busbw_factor(const std::string& collective, int n) {
  return collective == "all_reduce" ? 2.0 * (n - 1) / n : (n - 1.0) / n;
}

std::string curve_algorithm(const PublishedCurve& curve, const std::string& requested) {
  if (requested != "nccl") return requested;
  const auto& node = topologies::node_preset(curve.preset);
  if (!node.nccl)  // RCCL's nodes: what the preset runs by default
    return std::string(default_algorithm(parse_collective_kind(curve.collective), node.collective_library()));
  const auto ran_as = [&](std::string_view algorithm) {
    return curve.nccl_algorithm == algorithm ||
           curve.nccl_algorithm.starts_with(fmt::format("{} (", algorithm));
  };
  return ran_as("Ring")       ? "nccl_ring"
         : ran_as("NVLSTree") ? "nvls_tree"
         : ran_as("NVLS")     ? "nvls"
                              : requested;
}

std::vector<double> simulate_curve(const PublishedCurve& curve, const topologies::NodePreset& preset,
                                   const std::string& algorithm,
                                   const std::vector<std::string>& simgrid_args) {
  const PlatformBuilder builder =
      curve.nodes == 1
          ? topologies::node_platform(preset)
          : topologies::multi_node_cluster(topologies::library_cluster_spec(preset.spec(), curve.nodes));
  std::vector<std::string> argv = {"spmdsim"};
  argv.insert(argv.end(), simgrid_args.begin(), simgrid_args.end());
  const auto simulation = start_simulation(builder, preset.network_model->simgrid_config, std::move(argv));
  Simulation& sim = *simulation;
  const int n = sim.num_devices();
  if (n != curve.devices)
    throw std::logic_error(
        fmt::format("{} x {} has {} devices, the curve {}", curve.nodes, curve.preset, n, curve.devices));
  const CollectiveOptions options{.algorithm = algorithm, .channels = curve_channels(curve, preset)};
  std::vector<double> busbw;
  for (const auto& point : curve.points) {
    const Call call = call_for(curve.collective, point.bytes, n);
    auto run = pmap(
        [&](const Args& a) -> Tree {
          const Array& x = a[0].array();
          if (curve.collective == "all_reduce") return psum(x, "i", {}, options);
          if (curve.collective == "all_gather") return all_gather(x, "i", 0, true, {}, options);
          return psum_scatter(x, "i", 0, true, {}, options);
        },
        {.axis_name = "i", .name = "published curve point"});
    run(sim, {Array::abstract({n, call.elements}, DType::f32)});
    Seconds time = 0;
    const auto report = sim.report();
    for (const auto& times : report.calls.back().times)
      if (auto it = times.communication.find(call.name); it != times.communication.end())
        time = std::max(time, it->second);
    if (!(time > 0)) throw std::logic_error("published curve point: the collective took no simulated time");
    busbw.push_back(call.bytes / time * busbw_factor(curve.collective, n));
  }
  return busbw;
}

double relative_error(double simulated, double published) {
  return (simulated - published) / published;
}

double largest_error(const CurveComparison& c, double from_bytes) {
  double largest = 0;
  for (std::size_t i = 0; i < c.simulated.size(); ++i)
    if (c.curve->points[i].bytes >= from_bytes)
      largest = std::max(largest, std::abs(relative_error(c.simulated[i], c.curve->points[i].busbw)));
  return largest;
}

namespace {

std::string title(const CurveComparison& c) {
  return fmt::format("{} {} on {} ({}, {} devices), published: {}, {} [{}]; simulated: {}",
                     c.curve->collective, c.curve->preset, c.curve->system,
                     c.curve->nodes == 1 ? "1 node" : fmt::format("{} nodes", c.curve->nodes),
                     c.curve->devices, c.curve->nccl_algorithm, c.curve->tool, c.curve->source, c.algorithm);
}

// largest_error as a percentage, "-" where the curve has no point of at least `from_bytes`.
std::string largest_error_text(const CurveComparison& c, double from_bytes) {
  const auto& points = c.curve->points;
  const bool any =
      std::any_of(points.begin(), points.end(), [&](const auto& p) { return p.bytes >= from_bytes; });
  return any ? fmt::format("{:.1f}%", 100 * largest_error(c, from_bytes)) : "-";
}

// How many of the points a constant was fitted to (`fitted`), or of those held out, meet the targets: |error|
// <= 5% at >= 64 MiB, <= 15% at every size.
std::string targets_met(const std::vector<CurveComparison>& comparisons, bool fitted) {
  int large = 0, large_met = 0, all = 0, all_met = 0;
  for (const auto& c : comparisons)
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& p = c.curve->points[i];
      if (p.fitted.empty() == fitted) continue;
      const double error = std::abs(relative_error(c.simulated[i], p.busbw));
      ++all;
      all_met += error <= kEverySizeTarget;
      if (p.bytes >= kLargeFromBytes) {
        ++large;
        large_met += error <= kLargeTarget;
      }
    }
  const std::string large_text =
      large == 0 ? "none at >= 64 MiB"
                 : fmt::format("{} of {} points at >= 64 MiB within 5%", large_met, large);
  return fmt::format("{}, {} of {} points within 15%", large_text, all_met, all);
}

std::string targets_met(const std::vector<CurveComparison>& comparisons) {
  return fmt::format("targets met, held out: {}; fitted: {}", targets_met(comparisons, false),
                     targets_met(comparisons, true));
}

// What one point was simulated as, and "(fit)" after it where a constant was fitted to it.
std::string simulated_as_text(const CurveComparison& c, const PublishedPoint& p) {
  return !p.fitted.empty() ? simulated_as(c, p.bytes) + " (fit)" : simulated_as(c, p.bytes);
}

std::string summary(const CurveComparison& c) {
  return fmt::format("largest |error|: {} at >= 64 MiB, {} at every size",
                     largest_error_text(c, kLargeFromBytes), largest_error_text(c, 0));
}

}  // namespace

void write_curve_table(std::ostream& out, const std::vector<CurveComparison>& comparisons) {
  out << "\n# spmdsim calibrate --curves: published busbw curves beside the simulation (GB/s; busbw as "
         "nccl-tests; "
         "error = (simulated - published) / published)\n";
  for (const auto& c : comparisons) {
    out << fmt::format("\n# {}\n{:>10}  {:>10}  {:>10}  {:>8}  {}\n", title(c), "size", "published",
                       "simulated", "error", "simulated as");
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& p = c.curve->points[i];
      out << fmt::format("{:>10}  {:>10.2f}  {:>10.2f}  {:>8}  {}\n", size_text(p.bytes), p.busbw / 1e9,
                         c.simulated[i] / 1e9, percent(relative_error(c.simulated[i], p.busbw)),
                         simulated_as_text(c, p));
    }
    out << "# " << summary(c) << "\n";
  }
  out << "\n# " << targets_met(comparisons) << "\n";
}

void write_curve_markdown(std::ostream& out, const std::vector<CurveComparison>& comparisons) {
  out << "\n## Whole curves (`spmdsim calibrate --curves`)\n\n"
      << "Every published curve of `experiments/commands/calibrate/data/published_busbw.csv` (each row\n"
      << "with its source), simulated on the curve's preset and node count (rail-optimised nodes) with the\n"
      << "algorithm named. One constant is fitted to these points: mi300x_8gpu's MSCCL channel rate\n"
      << "(RCCL's all-pairs all-reduce up to 16 MiB, docs/collectives.md#msccl), to the points of AMD's\n"
      << "blog curve from 32 KiB to 16 MiB, marked (fit); `spmdsim calibrate --fit` fits it again.\n"
      << "Every other point is held out: `nccl` and\n"
      << "`nccl_ring` on the NVIDIA presets run on NCCL 2.30.7's own figures (channels, protocol latencies\n"
      << "and bandwidths, the NVLS graphs and efficiency, the trees' caps and size corrections;\n"
      << "docs/collectives.md#protocols to #tree), on the MI300X on RCCL's, and the fitted model\n"
      << "corrections above scale the device links, which the libraries' rates keep below their limit.\n"
      << "Every call also pays its device's kernel launch, the figure each compute kernel pays (2 us on\n"
      << "the GPU presets, docs/presets.md §K.7; not fitted), which NCCL's tuner model leaves out.\n"
      << "Targets: |error| <= 5% at >= 64 MiB, <= 15% at every size.\n\n"
      << "Reading: each curve runs `nccl` (what NCCL's tuner picks among Tree, Ring, NVLS on one node and\n"
      << "NVLSTree across nodes, with the protocol it picks for the size and the channels the size earns:\n"
      << "\"simulated as\", as NCCL_DEBUG=INFO prints them), `nccl_ring` where NCCL ran Ring\n"
      << "(`NCCL_ALGO=Ring`, `NCCL_NVLS_ENABLE=0`, or Ring chosen), or `nvls` and `nvls_tree` where NVLS\n"
      << "or NVLSTree was named. NVLS on one node moves at the tuner's rate less the step latency of its\n"
      << "chunks (NCCL's chunk per size, each chunk step Simple's 3.4 us over NVLink) after its latency\n"
      << "and the fill of its first loop (docs/collectives.md#nvls; nothing fitted): on the four one-node\n"
      << "nccl-tests curves of H100 and H200 (DGX, AWS p5, Azure ND v5, whose runs forced NVLS) it is\n"
      << "within 2.2% from 64 MiB (5.4-6.0% at 1-2 GiB on AWS's run, which dips there) and 14.5% from 2\n"
      << "MiB (slower than measured by 3-15% at 2 and 4 MiB), and the step the curves take between 512\n"
      << "MiB and 1 GiB is where NCCL's chunk doubles; the tuner's rate alone was 17-53% faster than these\n"
      << "curves from 4 to 64 MiB. Below 2 MiB, where the tuner runs Ring LL, the two default curves run\n"
      << "with one process per GPU (DGX, AWS p5) are within 12.6%; without the launch they were 8-22%\n"
      << "slower than simulated.\n"
      << "Tree moves all its stages at once at NCCL's tuner rate after the tuner's latency;\n"
      << "NVLSTree after that latency and the time its pipeline takes to fill, a loop of one chunk per\n"
      << "CTA and head crossing the network up and down the tree of nodes at the call's pace, with NCCL's\n"
      << "chunk per size and node count (docs/collectives.md#tree, #nvlstree; nothing fitted). Across\n"
      << "nodes Ring and Tree run on NCCL's graphs across nodes, one channel per NIC at 48 GB/s with 400\n"
      << "Gb/s NICs (24 with 200 Gb/s), each channel twice: 16 channels (docs/collectives.md#channels-\n"
      << "across-nodes). On 2 nodes, on two clusters (qoofyk, gj-aion), NVLSTree is within 2.4% from 32\n"
      << "MiB to 16 GiB and the jump the fill predicts between 32 and 64 MiB (the chunk doubling) is in\n"
      << "both curves; on 4 nodes within 2.9% from 128 to 512 MiB on one cluster, on 8 nodes within 3.3%\n"
      << "from 128 to 512 MiB. From 1 GiB on 4 nodes (4 GiB on 8) the tuner picks Ring, whose graph\n"
      << "across nodes (8 x 48 GB/s) outpaces NVLSTree's (8 x 45.5): 4.7-9.9% slower than measured on\n"
      << "the qoofyk cluster, whose maintainers name NVLSTree, 0.2-7.2% faster on the gj-aion cluster,\n"
      << "whose runs level off lower. NVLSTree is slower than measured by 7-22% at 4 and 8 MiB on 2\n"
      << "nodes, 20-32% at 16 MiB and 4-20% at 32-64 MiB on 4, 28%, 18% and 12% at 16, 32 and 64 MiB on\n"
      << "8. On the qoofyk cluster Tree is within\n"
      << "11.3% from 32 to 256 KiB, and on 4 nodes up to 1 MiB (on 2 nodes +38% and +15% at 512 KiB and\n"
      << "1 MiB); from 1 to 8 MiB, where the tuner picks Tree LL128 across nodes, every multi-node H100\n"
      << "curve is slower than simulated, by 3% to 284% (and a published dip at 8 MiB on 8 nodes):\n"
      << "NCCL's tuner model, which spmdsim follows for Tree, has no fill either, and Tree's is not\n"
      << "modelled. The two PyTorch curves (H200, B200: `all_reduce_bench.py`) take 17-36 us a call more\n"
      << "than simulated up to 1 MiB, the benchmark's own cost per call (Python, its synchronisation),\n"
      << "which spmdsim does not model. The A100 curve was run with `-g 8` (one thread drives the 8\n"
      << "GPUs) and is flat at 101 us from 1 to 4 MiB. The MI300X curves (RCCL) run `nccl`: up to 16\n"
      << "MiB the MSCCL all-pairs program RCCL's algorithm files give the size (LL on 4, then 8 channels,\n"
      << "Simple on 8 from 512 KiB) at RCCL's latencies for its two steps and the fitted channel rate,\n"
      << "above it Ring on the mesh's 7 disjoint cycles at RCCL's link figure, with its tuner's protocol\n"
      << "and latencies\n"
      << "(docs/collectives.md#rccl, #msccl). The other curve run with one process per GPU (hisohara,\n"
      << "another cluster) is within 13.9% at every size, every MI300X curve within 4% from 64 MiB up. On\n"
      << "both, the LL programs from 32 to 128 KiB are 13-17% slower than measured: RCCL's latencies\n"
      << "for their two steps (13.6 us) already exceed the blog's whole call at 1 KiB (13.1 us), and the\n"
      << "launch comes on top (without it they were within 5.5%, and the fit gave 17.11 GB/s). The\n"
      << "blog's run with `-G 1` (the benchmark launches its kernels as a HIP graph) is 36-47% faster than\n"
      << "simulated up to 1 MiB, about 5.5 us a call less than its run without; the two runs with `-g 8`\n"
      << "(one thread launches the 8 GPUs' kernels one after another) sit on a 45-67 us floor up to 2 MiB:\n"
      << "launch costs of the benchmark, which spmdsim does not model.\n\n"
      << "The all-gathers and reduce-scatters run Ring on every curve here (NCCL's tuner picks it for\n"
      << "them, and `nccl` with it). A ring's first pass pays each step's overhead whole (Simple's 2.8 us\n"
      << "over NVLink, 11.3 us across nodes, over LL's), where the slices of later passes hide it, as\n"
      << "NCCL's tuner counts steps x hwLat once per call (docs/collectives.md#protocols; nothing\n"
      << "fitted). On one node of H100s (two sources, one with NCCL 2.29.2) the all-gather is then\n"
      << "within 7.3% from 64 MiB and 4.1% from 512 MiB (10.7% faster than measured at 32 MiB), the two\n"
      << "reduce-scatters within 6.8% at every size published (from 32 MiB); without that fill they\n"
      << "were 7-37% faster from 32 to 256 MiB. Across 2 nodes the two curves are Google Cloud's example\n"
      << "outputs, run through its own NCCL network plugin and tuner, on NCCL's graph across nodes (16\n"
      << "channels of 24 GB/s, two on each 400 Gb/s NIC): B200 within 7.3% from 128 MiB, H200 within 7.2%\n"
      << "from 128 MiB (on the node's graph, 24 channels of 15 GB/s, they were 13.2% and 14.2% slower\n"
      << "than measured at 128 and 512 MiB); at 64 MiB the simulated rings drop where they change from\n"
      << "LL128 to Simple (B200 -33%, H200 -18%), which the published curves do not, and from 1 to 16 MiB\n"
      << "they are 10-80% faster than measured. Forced to LL128 (`spmdsim collectives --protocol LL128`),\n"
      << "the 64 MiB points are -9.1% (B200) and -2.4% (H200): either Google's tuner, whose choices are not\n"
      << "published, keeps LL128 at that size, or it picks Simple and spmdsim's Simple across nodes is too\n"
      << "slow there; an NCCL_DEBUG log of such a run would tell. Across nodes the walked ring still\n"
      << "moves in lock step at its slowest hop's pace (docs/collectives.md#protocols), the crossing hops'\n"
      << "at the edge of their NICs (two channels of 24 GB/s on the preset's 47): the 2 x 8 H100 Ring\n"
      << "curve, run with NCCL_MIN_CTAS=24 (NCCL then copies its 16 channels up to 24, and the comparison\n"
      << "runs as many), is 6-12% slower than measured from 64 MiB (13-24% on the node's graph); its\n"
      << "391 GB/s at 4 GiB needs 48.9 GB/s per NIC.\n"
      << "A second one-node A100 all-reduce curve, run with one process per GPU (a sample output in a\n"
      << "test of facebookresearch/gcm), is 3.4-17% faster than measured from 32 to 128 MiB and within\n"
      << "4.9% from 256 MiB; the first, run with `-g 8`, stays 21-44% faster from 32 to 256 MiB. Across 2\n"
      << "nodes of A100 40GB (Azure ND96asr_v4, 8 x 200G HDR) the simulated Ring, on NCCL's graph of 8 x\n"
      << "24 GB/s, is within 5.7% from 512 MiB (it was 5.4-6.4% faster on the node's graph) and 9-32%\n"
      << "faster than measured from 2 to 128 MiB. On 2\n"
      << "nodes of MI300X (AMD's AAC10 cluster, 8 RoCE NICs per node of a speed not stated, RCCL 2.22.3),\n"
      << "whose RCCL keeps PXN off below 64 ranks (each ring leaves a node by its own GPU's NIC, so its\n"
      << "channels load 7 of the mesh's links in 8: docs/collectives.md#channels), it is within 2.5% from\n"
      << "1 GiB and 5.3% at 512 MiB (11-15% slower through PXN), 11.8% faster at 256 MiB and 65-165%\n"
      << "faster below, where the published curve climbs by 69% from 128 to 256 MiB: RCCL's choices\n"
      << "across nodes other than its tuner's ring are not modelled.\n"
      << "\n"
      << "Over all the curves, " << targets_met(comparisons) << ".\n\n"
      << "| curve | published as | simulated | largest error >= 64 MiB | largest error, all sizes |\n"
      << "|---|---|---|---:|---:|\n";
  for (const auto& c : comparisons)
    out << fmt::format("| {} {}, {} x {} ({}) | {}, {} | {} | {} | {} |\n", c.curve->collective,
                       c.curve->preset, c.curve->nodes, c.curve->devices / c.curve->nodes, c.curve->system,
                       c.curve->nccl_algorithm, c.curve->tool, c.algorithm,
                       largest_error_text(c, kLargeFromBytes), largest_error_text(c, 0));
  for (const auto& c : comparisons) {
    out << fmt::format("\n### {}\n\n", title(c))
        << "| size | published (GB/s) | simulated (GB/s) | error | simulated as |\n"
        << "|---:|---:|---:|---:|---|\n";
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& p = c.curve->points[i];
      out << fmt::format("| {} | {:.2f} | {:.2f} | {} | {} |\n", size_text(p.bytes), p.busbw / 1e9,
                         c.simulated[i] / 1e9, percent(relative_error(c.simulated[i], p.busbw)),
                         simulated_as_text(c, p));
    }
  }
}

}  // namespace spmdsim::cli
