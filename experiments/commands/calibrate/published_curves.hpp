// The published bus bandwidth curves spmdsim's collectives are compared with
// (commands/calibrate/data/published_busbw.csv, compiled in): one curve per system, node count, collective
// and NCCL setting, each point with its source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli {

struct PublishedPoint {
  double bytes = 0;    // nccl-tests' S
  double busbw = 0;    // B/s
  std::string fitted;  // the model constant fitted to it (the file's `fitted` column); empty: held out
};

struct PublishedCurve {
  std::string system;  // as the source describes it
  std::string preset;  // the spmdsim node preset of the same GPU
  int nodes = 1;
  int devices = 8;             // ranks in all
  std::string collective;      // all_reduce, all_gather, reduce_scatter
  std::string nccl_algorithm;  // as the source states it
  std::string tool;            // nccl-tests or a PyTorch benchmark
  std::string source;
  std::vector<PublishedPoint> points;  // by size
};

// The curves of `csv` (the data file's format: '#' comments, a header, one row per point): the rows of one
// system, node count, collective, NCCL setting and source make one curve, its points in file order. Throws
// std::runtime_error naming the line of a malformed row.
std::vector<PublishedCurve> parse_published_curves(std::string_view csv);
// The compiled-in data file's curves.
const std::vector<PublishedCurve>& published_curves();

}  // namespace spmdsim::cli
