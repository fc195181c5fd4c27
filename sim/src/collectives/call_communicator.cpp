#include "collectives/call_communicator.hpp"

#include "collectives/phase_booking_communicator.hpp"

namespace spmdsim::detail {

std::unique_ptr<DeviceCommunicator> call_communicator(DeviceContext& ctx, AxisGroup group,
                                                      std::string collective, int pipeline_chunks,
                                                      std::vector<int> dimensions,
                                                      std::vector<std::string> dimension_algorithms,
                                                      int channels, std::string protocol) {
  if (ctx.runtime().collectives().aggregate_ring_phases())
    return std::make_unique<PhaseBookingCommunicator>(
        ctx, std::move(group), std::move(collective), pipeline_chunks, std::move(dimensions),
        std::move(dimension_algorithms), channels, std::move(protocol));
  return std::make_unique<DeviceCommunicator>(ctx, std::move(group), std::move(collective), pipeline_chunks,
                                              std::move(dimensions), std::move(dimension_algorithms),
                                              channels, std::move(protocol));
}

}  // namespace spmdsim::detail
