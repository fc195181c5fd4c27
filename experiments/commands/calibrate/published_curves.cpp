#include "commands/calibrate/published_curves.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "published_busbw.hpp"

namespace spmdsim::cli {
namespace {

constexpr std::size_t kFields = 13;

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

}  // namespace

std::vector<PublishedCurve> parse_published_curves(std::string_view csv) {
  std::vector<PublishedCurve> curves;
  std::istringstream in{std::string(csv)};
  std::string line;
  bool header = true;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    if (std::exchange(header, false)) continue;
    const auto f = split_commas(line);
    if (f.size() != kFields)
      throw std::runtime_error(
          fmt::format("published_busbw.csv line {}: {} fields, expected {}", number, f.size(), kFields));
    PublishedCurve key{.system = f[0],
                       .preset = f[1],
                       .nodes = std::stoi(f[2]),
                       .devices = std::stoi(f[3]),
                       .collective = f[4],
                       .nccl_algorithm = f[5],
                       .tool = f[9],
                       .source = f[11]};
    const PublishedPoint point{
        .bytes = std::stod(f[6]), .busbw = std::stod(f[7]) * 1e9, .fitted = f[12] == "-" ? "" : f[12]};
    auto same = std::find_if(curves.begin(), curves.end(), [&](const PublishedCurve& c) {
      return c.system == key.system && c.nodes == key.nodes && c.collective == key.collective &&
             c.nccl_algorithm == key.nccl_algorithm && c.source == key.source;
    });
    if (same == curves.end()) same = curves.insert(curves.end(), std::move(key));
    same->points.push_back(point);
  }
  return curves;
}

const std::vector<PublishedCurve>& published_curves() {
  static const std::vector<PublishedCurve> curves = parse_published_curves(kPublishedBusbwCsv);
  return curves;
}

}  // namespace spmdsim::cli
