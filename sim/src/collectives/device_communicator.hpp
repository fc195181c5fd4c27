// Communicator over SimGrid: each chunk is one message on the channel between two devices, whose
// simulated size is the chunk's byte size; received chunks are collective scratch in device memory.
// With SimulationOptions::aggregate_ring_phases, a run of sendrecv_shaped on abstract data with the
// same peers is booked instead and simulated at its end as one phase: one transfer each way of the run's
// bytes, the latencies of its other messages, then the reductions done meanwhile. Memory is placed and
// released step by step as in the per-message run, so peaks are the same.
#pragma once

#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>

#include "engine/device_context.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::detail {

class DeviceCommunicator final : public Communicator {
 public:
  // group: the call ranks taking part, in group order, and ctx's position among them.
  // dimension_algorithms: one per dimension, or empty for ring along every one.
  DeviceCommunicator(DeviceContext& ctx, AxisGroup group, std::string collective, int pipeline_chunks,
                     std::vector<int> dimensions, std::vector<std::string> dimension_algorithms = {},
                     int channels = 1, std::string protocol = {});

  int rank() const override { return group_.position; }
  int size() const override { return group_.size(); }
  // The call ranks taking part, in group order.
  const std::vector<int>& group() const { return group_.ranks(); }
  void send(int peer, const Array& chunk) override;
  void send_and_wait(int peer, const Array& chunk) override;
  Array recv(int peer) override;
  Array sendrecv(int to, const Array& chunk, int from) override;
  Array sendrecv_shaped(int to, const Array& chunk, int from, const Array& expected) override;
  Array combine(const Array& a, const Array& b, ReduceOp op) override;
  int pipeline_chunks() const override { return pipeline_chunks_; }
  std::vector<int> dimensions() const override { return dimensions_; }
  std::vector<std::string> dimension_algorithms() const override;
  std::unique_ptr<Communicator> subgroup(std::vector<int> members) override;
  int channels() const override { return channels_; }
  // Channel 0 runs on the calling actor, the others each on an actor of their own on this device's host,
  // over mailboxes of their own (lane c).
  void in_parallel(const std::vector<std::vector<int>>& rings, const ChannelProtocol& protocol,
                   const std::function<void(Communicator&, int)>& body) override;
  const NcclNode* nccl_node() const override;
  const std::string& protocol() const override { return protocol_name_; }
  bool switch_reduces() const override;
  Array switch_all_reduce(const Array& flat, ReduceOp op, const ChannelProtocol& protocol) override;

  // Simulates the booked phase, then waits for the sends still in flight: a collective ends when its last
  // byte has left.
  void finish();

  // For algorithms booked from their totals (booked_ring.hpp): whether x's exchanges are booked rather than
  // sent (aggregation on, x abstract); booking `messages` exchanges with the ranks `to` and `from` that send
  // bytes_out in all and spend `reducing` in reductions, as that many sendrecv_shaped and combine calls
  // would; the time combine takes for a piece shaped like `piece`.
  bool books(const Array& x) const;
  void book_phase(int to, int from, Bytes bytes_out, int messages, Seconds reducing);
  Seconds reduction_time(const Array& piece, ReduceOp op) const;
  DeviceContext& context() const { return ctx_; }

 private:
  // A send not waited for yet, and the buffer it reads, which stays allocated until then.
  struct PendingSend {
    simgrid::s4u::CommPtr transfer;
    Array chunk;
  };
  // A run of booked exchanges between this device and two others (device ids).
  struct Phase {
    int to = -1;
    Seconds step_overhead = 0;  // the protocol's, per message to `to`
    int from = -1;
    Bytes bytes_out = 0;
    int messages = 0;
    Seconds reducing = 0;
  };
  // Simulates the booked phase, if any; every verb but sendrecv_shaped and combine calls it first.
  void flush_phase();
  simgrid::s4u::CommPtr post_send(int peer, const Array& chunk);
  // Sends `bytes` of data to device `to_device` after `overhead`, as the protocol's wire bytes.
  simgrid::s4u::CommPtr put(int to_device, void* payload, Bytes bytes, Seconds overhead);
  Seconds step_overhead(int peer) const;
  void pace(Bytes bytes);
  simgrid::s4u::CommPtr post_recv(int peer, Array** slot);
  // A chunk received from `peer`, placed in this device's memory as collective scratch.
  Array take(int peer, Array* received);
  int device_of(int peer) const;

  DeviceContext& ctx_;
  AxisGroup group_;
  std::string collective_;
  int pipeline_chunks_;
  int channels_;
  int lane_ = 0;  // the mailboxes' lane (DeviceChannels::channel): in_parallel's channel
  std::string protocol_name_;
  // In a channel of in_parallel: how it moves its messages, and the node of each of its ranks (for the step
  // overhead of a message that crosses nodes).
  ChannelProtocol protocol_;
  std::vector<int> nodes_;
  std::vector<int> dimensions_;
  std::vector<std::string> dimension_algorithms_;
  // Shared with subgroups, so that finish() on the outermost communicator waits for every send and a
  // subgroup's phase is simulated before any other traffic of this device.
  std::shared_ptr<std::vector<PendingSend>> pending_sends_;
  std::shared_ptr<Phase> phase_;
};

}  // namespace spmdsim::detail
