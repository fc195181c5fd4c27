#include "commands/kernels/run.hpp"

#include <cmath>
#include <iostream>
#include <string>

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

// The simulated rate of a streaming kernel: its bytes over the time the device charges it (launch included).
double predicted_gbps(const PublishedStreaming& p) {
  const DeviceSpec spec = topologies::device_preset(p.device).spec();
  return p.bytes / spec.kernel_time({.flops = p.flops, .bytes = p.bytes}, p.dtype) / 1e9;
}

struct ErrorSummary {
  std::string name;
  int points = 0;
  int within_10 = 0;
  double sum_abs = 0;

  void add(double error) {
    ++points;
    sum_abs += std::abs(error);
    if (std::abs(error) <= 0.10) ++within_10;
  }
  std::string line() const {
    return fmt::format("# {}: {} points, mean |error| {:.1f}%, {} within 10%\n", name, points,
                       100 * sum_abs / points, within_10);
  }
};

void print_matmuls() {
  std::cout << "# spmdsim kernels: simulated GEMM throughput (DeviceSpec::kernel_time) against published "
               "measurements\n"
            << "# fit: the preset's matmul efficiency was taken from this point; held out: not used by any "
               "constant\n"
            << fmt::format("#{:<8} {:<5} {:>26} {:>10} {:>10} {:>8}  {:<8}  {}\n", "device", "dtype",
                           "batch x m x n x k", "published", "simulated", "error", "set", "source");
  ErrorSummary fit{"fit"}, held_out{"held out"};
  for (const PublishedMatmul& p : published_matmuls()) {
    const double predicted = predicted_tflops(p);
    const double error = predicted / p.tflops - 1;
    (p.fit ? fit : held_out).add(error);
    std::cout << fmt::format(" {:<8} {:<5} {:>26} {:>10.1f} {:>10.1f} {:>+7.1f}%  {:<8}  {}\n", p.device,
                             dtype_name(p.dtype),
                             fmt::format("{} x {} x {} x {}", p.shape.batch, p.shape.m, p.shape.n, p.shape.k),
                             p.tflops, predicted, 100 * error, p.fit ? "fit" : "held out", p.source);
  }
  std::cout << fit.line() << held_out.line();
}

void print_streaming() {
  std::cout
      << "\n# streaming kernels: simulated achieved bandwidth (launch, then the bytes at the achieved HBM "
         "bandwidth) against published measurements; no constant comes from them\n"
      << "# timed: back to back = among kernels launched one after another, as a step runs them; alone = "
         "one kernel timed by itself\n"
      << fmt::format("#{:<9} {:<10} {:<8} {:>14} {:>8} {:<12} {:>9} {:>9} {:>8}  {}\n", "device", "kernel",
                     "dtype", "elements", "MB", "timed", "published", "simulated", "error", "source");
  ErrorSummary back_to_back{"back to back"}, alone{"alone"};
  for (const PublishedStreaming& p : published_streaming()) {
    const double predicted = predicted_gbps(p);
    const double error = predicted / p.gbps - 1;
    (p.back_to_back ? back_to_back : alone).add(error);
    std::cout << fmt::format(" {:<9} {:<10} {:<8} {:>14} {:>8.1f} {:<12} {:>9.1f} {:>9.1f} {:>+7.1f}%  {}\n",
                             p.device, p.kernel, dtype_name(p.dtype), p.shape, p.bytes / 1e6,
                             p.back_to_back ? "back to back" : "alone", p.gbps, predicted, 100 * error,
                             p.source);
  }
  std::cout << back_to_back.line() << alone.line();
}

}  // namespace

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  po::options_description described("spmdsim kernels options");
  described.add_options()("help,h", "show this help");
  const OptionValues values(split.ours, described);
  if (values.map().count("help")) {
    std::cout
        << "usage: spmdsim kernels\n\n"
        << "The device presets' matmul kernel class (efficiency at the best shape, wave quantisation\n"
        << "of 128x256 tiles, achieved HBM bandwidth, launch) against published GEMM throughput by\n"
        << "shape and dtype, and their streaming kernels (launch, bytes at the achieved HBM bandwidth)\n"
        << "against published memory bandwidth by size (docs/training.md, \"Kernel classes\").\n\n"
        << described << "\n";
    return 0;
  }
  print_matmuls();
  print_streaming();
  return 0;
}

}  // namespace spmdsim::cli::kernels
