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

constexpr double kLargeFrom = 64.0 * (1 << 20);  // the "large" sizes: 64 MiB and up

std::string size_text(double bytes) {
  for (auto [unit, scale] : {std::pair{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}})
    if (bytes >= scale) return fmt::format("{:g} {}", bytes / scale, unit);
  return fmt::format("{:g} B", bytes);
}

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

}  // namespace

double busbw_factor(const std::string& collective, int n) {
  return collective == "all_reduce" ? 2.0 * (n - 1) / n : (n - 1.0) / n;
}

std::vector<double> simulate_curve(const PublishedCurve& curve, const std::string& algorithm,
                                   const std::vector<std::string>& simgrid_args) {
  const auto& preset = topologies::node_preset(curve.preset);
  const PlatformBuilder builder =
      curve.nodes == 1 ? topologies::node_platform(preset)
                       : topologies::multi_node_cluster({.node = preset.spec(), .num_nodes = curve.nodes});
  std::vector<std::string> argv = {"spmdsim"};
  argv.insert(argv.end(), simgrid_args.begin(), simgrid_args.end());
  const auto simulation = start_simulation(builder, preset.network_model->simgrid_config, std::move(argv));
  Simulation& sim = *simulation;
  const int n = sim.num_devices();
  if (n != curve.devices)
    throw std::logic_error(
        fmt::format("{} x {} has {} devices, the curve {}", curve.nodes, curve.preset, n, curve.devices));
  const CollectiveOptions options{.algorithm = algorithm};
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

std::string summary(const CurveComparison& c) {
  return fmt::format("largest |error|: {:.1f}% at >= 64 MiB, {:.1f}% at every size",
                     100 * largest_error(c, kLargeFrom), 100 * largest_error(c, 0));
}

}  // namespace

void write_curve_table(std::ostream& out, const std::vector<CurveComparison>& comparisons) {
  out << "\n# spmdsim calibrate --curves: published busbw curves beside the simulation (GB/s; busbw as "
         "nccl-tests; "
         "error = (simulated - published) / published)\n";
  for (const auto& c : comparisons) {
    out << fmt::format("\n# {}\n{:>10}  {:>10}  {:>10}  {:>8}\n", title(c), "size", "published", "simulated",
                       "error");
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& p = c.curve->points[i];
      out << fmt::format("{:>10}  {:>10.2f}  {:>10.2f}  {:>8}\n", size_text(p.bytes), p.busbw / 1e9,
                         c.simulated[i] / 1e9, percent(relative_error(c.simulated[i], p.busbw)));
    }
    out << "# " << summary(c) << "\n";
  }
}

void write_curve_markdown(std::ostream& out, const std::vector<CurveComparison>& comparisons) {
  out << "\n## Whole curves (`spmdsim calibrate --curves`)\n\n"
      << "Every published curve of `experiments/commands/calibrate/data/published_busbw.csv` (each row with\n"
      << "its source), simulated on the curve's preset and node count (rail-optimised nodes) with the "
         "algorithm\n"
      << "named. Nothing is fitted to these points: the presets' constants come from the one-node ring at\n"
      << "1-16 GiB above, so every point here is held out. Targets: |error| <= 5% at >= 64 MiB, <= 15% at\n"
      << "every size.\n\n"
      << "Reading: `nccl_ring` is NCCL's ring over channels (docs/collectives.md#channels) with one "
         "protocol,\n"
      << "the links' own. The like-for-like rows are the curves NCCL ran as Ring (`NCCL_ALGO=Ring`,\n"
      << "`NCCL_NVLS_ENABLE=0`, or Ring chosen), where the large sizes come closest, across nodes too.\n"
      << "Where NCCL ran NVLS or NVLSTree (its default on H100/H200/B200 from a few MiB up)\n"
      << "spmdsim has no such algorithm yet, and below a few MiB NCCL's LL and LL128 protocols set the "
         "curve,\n"
      << "which are not modelled yet: the errors there measure what is missing, not a fit.\n\n"
      << "| curve | published as | simulated | largest error >= 64 MiB | largest error, all sizes |\n"
      << "|---|---|---|---:|---:|\n";
  for (const auto& c : comparisons)
    out << fmt::format("| {} {}, {} x {} ({}) | {}, {} | {} | {:.1f}% | {:.1f}% |\n", c.curve->collective,
                       c.curve->preset, c.curve->nodes, c.curve->devices / c.curve->nodes, c.curve->system,
                       c.curve->nccl_algorithm, c.curve->tool, c.algorithm,
                       100 * largest_error(c, kLargeFrom), 100 * largest_error(c, 0));
  for (const auto& c : comparisons) {
    out << fmt::format("\n### {}\n\n", title(c)) << "| size | published (GB/s) | simulated (GB/s) | error |\n"
        << "|---:|---:|---:|---:|\n";
    for (std::size_t i = 0; i < c.simulated.size(); ++i) {
      const auto& p = c.curve->points[i];
      out << fmt::format("| {} | {:.2f} | {:.2f} | {} |\n", size_text(p.bytes), p.busbw / 1e9,
                         c.simulated[i] / 1e9, percent(relative_error(c.simulated[i], p.busbw)));
    }
  }
}

}  // namespace spmdsim::cli
