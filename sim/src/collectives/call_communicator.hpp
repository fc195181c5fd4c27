// The communicator a collective call runs on: the phase-booking backend under
// SimulationOptions::aggregate_ring_phases (phase_booking_communicator.hpp), else the per-message one
// (device_communicator.hpp). The one place that chooses between them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/device_communicator.hpp"

namespace spmdsim::detail {

// DeviceCommunicator's arguments.
std::unique_ptr<DeviceCommunicator> call_communicator(DeviceContext& ctx, AxisGroup group,
                                                      std::string collective, int pipeline_chunks,
                                                      std::vector<int> dimensions,
                                                      std::vector<std::string> dimension_algorithms = {},
                                                      int channels = 1, std::string protocol = {});

}  // namespace spmdsim::detail
