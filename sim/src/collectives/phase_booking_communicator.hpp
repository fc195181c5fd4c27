// The phase-booking backend of Communicator (SimulationOptions::aggregate_ring_phases,
// docs/performance.md#aggregated-phases): the per-message backend, except that a run of exchanges on abstract
// data with the same peers, booked through sendrecv_shaped and combine or from its totals (book_phase), is
// simulated at its end as one transfer each way of the run's bytes, the latencies of its other messages, then
// the reductions done meanwhile; book_in_parallel simulates every channel's run at once on the calling actor.
// Memory is placed and released as in the per-message run, so peaks are the same. Any other verb simulates
// the booked run first, then moves its own messages one by one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/device_communicator.hpp"

namespace spmdsim::detail {

class PhaseBookingCommunicator final : public DeviceCommunicator {
 public:
  using DeviceCommunicator::DeviceCommunicator;

  bool books_phases() const override { return true; }
  void book_phase(int to, int from, Bytes bytes_out, int messages, Seconds reducing) override;
  void book_in_parallel(const std::shared_ptr<const ChannelRings>& rings, const ChannelProtocol& protocol,
                        const std::function<void(Communicator&, int)>& body) override;
  Array sendrecv_staged(int to, const Array& chunk, int from, const Array& expected) override;
  Array hold_scratch(const Array& like) override;
  std::unique_ptr<Communicator> subgroup(std::vector<int> members) override;

 private:
  // A run of booked exchanges between this device and two others (device ids).
  struct Phase {
    int to = -1;
    Seconds step_overhead = 0;  // the protocol's, per message to `to`
    // Each further message of the run waits for the ring's slowest hop (a ring's steps are coupled): its
    // route latency and step overhead (slowest_hop).
    Seconds latency = 0;
    Seconds overhead = 0;
    int from = -1;
    Bytes bytes_out = 0;
    int messages = 0;
    Seconds reducing = 0;
  };
  // A booked phase and the lane whose mailboxes carry it.
  struct LanePhase {
    int lane;
    Phase phase;
  };

  // Simulates the booked phase, if any.
  void settle() override;
  std::unique_ptr<DeviceCommunicator> another(AxisGroup group, std::vector<int> dimensions,
                                              std::vector<std::string> dimension_algorithms,
                                              int channels) const override;
  // Adds the reduction's time to the booked phase's reductions, or takes it now where none is open.
  void take_reduction_time(const kernels::KernelResult& result) override;
  // Simulates booked phases side by side, each as its own actor would (its send after its step overhead, its
  // pace beside its transfers, its other messages' latencies, then its reductions), on the calling actor.
  void simulate_phases(const std::vector<LanePhase>& phases, const ChannelProtocol& protocol);

  // Shared with subgroups, so that a subgroup's phase is simulated before any other traffic of this device.
  std::shared_ptr<Phase> phase_ = std::make_shared<Phase>();
  // In a channel of book_in_parallel: where hold_scratch keeps its buffers until every channel has been
  // simulated, since the channels' actors would have held them side by side.
  std::vector<Array>* kept_scratch_ = nullptr;
};

}  // namespace spmdsim::detail
