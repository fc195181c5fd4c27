// What psum_benchmark's plain S4U programs (s4u_psum.hpp) share: the engine under the platform's network
// settings, the platform, and one actor per device that receives its input from the host CPU, runs an
// all-reduce with its ring neighbours and sends its result back, as spmdsim's pmap moves a psum's operands.
#pragma once

#include <cstdint>
#include <functional>

#include <simgrid/s4u/Host.hpp>

#include "s4u_psum.hpp"
#include "spmdsim/device_spec.hpp"

namespace spmdsim::benchmarks {

// One device's part of the all-reduce: its place in the ring and what its data costs.
struct RingDevice {
  int rank = 0;
  int devices = 0;
  std::int64_t floats = 0;  // float32 elements per device
  simgrid::s4u::Host* host = nullptr;
  simgrid::s4u::Host* next = nullptr;      // rank + 1's device
  simgrid::s4u::Host* previous = nullptr;  // rank - 1's device
  const DeviceSpec* spec = nullptr;

  // The elements of piece k of the array cut p ways, as numpy.array_split (and spmdsim's split_flat) cuts it.
  std::int64_t piece_floats(int k) const;
  // The pieces this device sends and receives at step s of the ring all-reduce's 2(p - 1): the reduce-scatter
  // (ring_reduce_scatter.cpp) for s < p - 1, then the all-gather (ring_all_gather.cpp), one formula for both.
  int sent_piece(int step) const { return (rank - step - 1 + 2 * devices) % devices; }
  int received_piece(int step) const { return (rank - step - 2 + 2 * devices) % devices; }
  // One reduction of `elements` float32 pairs inside a collective kernel: kernels::add's roofline without a
  // launch of its own, as DeviceCommunicator::combine charges it.
  double reduction_s(std::int64_t elements) const;
  // The latency of one message from `from` to `to`: the route's times the network model's latency factor,
  // as DeviceChannels::message_latency prices it.
  static double message_latency(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
};

// Runs `all_reduce` on every device (p > 1) between its input's arrival and its result's departure, after
// the device's kernel launch as spmdsim's collective call waits it; the psum's simulated time is the longest
// launch and all_reduce.
S4uPsumRun run_s4u_psum(int devices, std::int64_t bytes_per_device, int* argc, char** argv,
                        const std::function<void(const RingDevice&)>& all_reduce);

}  // namespace spmdsim::benchmarks
