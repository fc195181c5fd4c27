#include "collectives/collective_settings.hpp"

#include <fmt/format.h>

#include "collectives/nccl_protocols.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::detail {

CollectiveSettings::CollectiveSettings(const SimulationOptions& options, const std::vector<int>& dimensions,
                                       CollectiveLibrary library) {
  for (auto kind : kAllCollectiveKinds) {
    auto it = options.algorithms.find(kind);
    std::string name = it != options.algorithms.end() ? it->second
                                                       : std::string(default_algorithm(kind, library));
    if (name != "auto") check_algorithm(kind, name);
    algorithms_[kind] = std::move(name);
  }
  if (options.pipeline_chunks < 1)
    throw ValueError(fmt::format("pipeline_chunks must be at least 1 (got {})", options.pipeline_chunks));
  pipeline_chunks_ = options.pipeline_chunks;
  if (options.channels < 0)
    throw ValueError(fmt::format("channels must be at least 1, or 0 for one per device of a node (got {})",
                                 options.channels));
  channels_ = options.channels;
  if (!options.dimension_algorithms.empty())
    check_dimension_algorithms(options.dimension_algorithms, dimensions);
  dimension_algorithms_ = options.dimension_algorithms;
  if (!options.protocol.empty()) collectives::parse_nccl_protocol(options.protocol);
  protocol_ = options.protocol;
  aggregate_ring_phases_ = options.aggregate_ring_phases;
}

}  // namespace spmdsim::detail
