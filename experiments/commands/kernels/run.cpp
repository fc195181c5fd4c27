#include "commands/kernels/run.hpp"

#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "commands/kernels/published.hpp"
#include "common/command_line.hpp"
#include "common/config_file.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli::kernels {
namespace {

namespace po = boost::program_options;

// The simulated throughput of one GEMM: its FLOPs over the time the device charges it (launch included).
double predicted_tflops(const PublishedMatmul& p) {
  const DeviceSpec spec = topologies::device_preset(p.device).spec();
  const MatmulShape& s = p.shape;
  const double flops = 2.0 * static_cast<double>(s.batch * s.m * s.n * s.k);
  const double bytes = static_cast<double>(itemsize(p.dtype)) *
                       static_cast<double>(s.batch * (s.m * s.k + s.k * s.n + s.m * s.n));
  return flops / spec.kernel_time({.flops = flops, .bytes = bytes, .matmul = s}, p.dtype) / 1e12;
}

struct ErrorSummary {
  int points = 0;
  int within_10 = 0;
  double sum_abs = 0;
};

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  po::options_description described("spmdsim kernels options");
  described.add_options()("help,h", "show this help");
  const OptionValues values(split.ours, described);
  if (values.map().count("help")) {
    std::cout << "usage: spmdsim kernels\n\n"
              << "The device presets' matmul kernel class (efficiency at the best shape, wave quantisation\n"
              << "of 128x256 tiles, achieved HBM bandwidth, launch) against published GEMM throughput by\n"
              << "shape and dtype (docs/training.md, \"Kernel classes\").\n\n"
              << described << "\n";
    return 0;
  }
  std::cout << "# spmdsim kernels: simulated GEMM throughput (DeviceSpec::kernel_time) against published "
               "measurements\n"
            << "# fit: the preset's matmul efficiency was taken from this point; held out: not used by any "
               "constant\n"
            << fmt::format("#{:<8} {:<5} {:>26} {:>10} {:>10} {:>8}  {:<8}  {}\n", "device", "dtype",
                           "batch x m x n x k", "published", "simulated", "error", "set", "source");
  ErrorSummary fit, held_out;
  for (const PublishedMatmul& p : published_matmuls()) {
    const double predicted = predicted_tflops(p);
    const double error = predicted / p.tflops - 1;
    ErrorSummary& summary = p.fit ? fit : held_out;
    ++summary.points;
    summary.sum_abs += std::abs(error);
    if (std::abs(error) <= 0.10) ++summary.within_10;
    std::cout << fmt::format(" {:<8} {:<5} {:>26} {:>10.1f} {:>10.1f} {:>+7.1f}%  {:<8}  {}\n", p.device,
                             dtype_name(p.dtype),
                             fmt::format("{} x {} x {} x {}", p.shape.batch, p.shape.m, p.shape.n, p.shape.k),
                             p.tflops, predicted, 100 * error, p.fit ? "fit" : "held out", p.source);
  }
  for (const auto& [name, s] : {std::pair{"fit", fit}, std::pair{"held out", held_out}})
    std::cout << fmt::format("# {}: {} points, mean |error| {:.1f}%, {} within 10%\n", name, s.points,
                             100 * s.sum_abs / s.points, s.within_10);
  return 0;
}

}  // namespace spmdsim::cli::kernels
