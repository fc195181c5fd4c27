// The simulation's collective settings (SimulationOptions), checked once against the platform: the
// algorithm of each kind ("auto" included), the pipeline chunks, the multidim all-reduce's per-dimension
// algorithms and whether ring phases are booked whole. A call's own CollectiveOptions override them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/simulation.hpp"

namespace spmdsim::detail {

class CollectiveSettings {
 public:
  CollectiveSettings() = default;
  // ValueError for an unknown algorithm or protocol, pipeline_chunks below 1, negative channels, or per-dimension
  // algorithms that do not fit the platform's dimensions (`dimensions`: the platform's shape, or {device
  // count} when flat). `library`: what runs the platform's collectives when no algorithm is named
  // (default_algorithm).
  CollectiveSettings(const SimulationOptions& options, const std::vector<int>& dimensions,
                     CollectiveLibrary library);

  const std::string& algorithm(CollectiveKind kind) const { return algorithms_.at(kind); }
  const std::map<CollectiveKind, std::string>& algorithms() const { return algorithms_; }
  int pipeline_chunks() const { return pipeline_chunks_; }
  // 0: chosen per group (SimulationOptions::channels).
  int channels() const { return channels_; }
  const std::vector<std::string>& dimension_algorithms() const { return dimension_algorithms_; }
  // nccl_ring's protocol: "LL", "LL128", "Simple", or empty for NCCL's tuner's choice per call.
  const std::string& protocol() const { return protocol_; }
  bool aggregate_ring_phases() const { return aggregate_ring_phases_; }

 private:
  std::map<CollectiveKind, std::string> algorithms_;
  int pipeline_chunks_ = 1;
  int channels_ = 0;
  std::vector<std::string> dimension_algorithms_;
  std::string protocol_;
  bool aggregate_ring_phases_ = false;
};

}  // namespace spmdsim::detail
