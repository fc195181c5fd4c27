// The per-message backend of Communicator over SimGrid: each chunk is one message on the channel between two
// devices, whose simulated size is the chunk's byte size; received chunks are collective scratch in device
// memory, except staged ones (sendrecv_staged), which the algorithm keeps in an output buffer it holds.
// The phase-booking backend (phase_booking_communicator.hpp) is this one with runs of exchanges booked;
// call_communicator.hpp picks a call's.
#pragma once

#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include "engine/device_context.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::kernels {
struct KernelResult;  // api/kernels/kernels.hpp: an op's value and its cost.
}

namespace spmdsim::detail {

class DeviceCommunicator : public Communicator {
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
  Array sendrecv_staged(int to, const Array& chunk, int from, const Array& expected) override;
  Array combine_staged(const Array& a, const Array& b, ReduceOp op) override;
  int pipeline_chunks() const override { return pipeline_chunks_; }
  std::vector<int> dimensions() const override { return dimensions_; }
  std::vector<std::string> dimension_algorithms() const override;
  std::unique_ptr<Communicator> subgroup(std::vector<int> members) override;
  int channels() const override { return channels_; }
  // Channel 0 runs on the calling actor, the others each on an actor of their own on this device's host,
  // over mailboxes of their own (lane c).
  void in_parallel(const std::shared_ptr<const ChannelRings>& rings, const ChannelProtocol& protocol,
                   const std::function<void(Communicator&, int)>& body) override;
  const NcclNode* nccl_node() const override;
  const RcclNode* rccl_node() const override;
  const std::string& protocol() const override { return protocol_name_; }
  bool switch_reduces() const override;
  bool node_switches_reduce() const override;
  bool dimensions_are_mesh_lines() const override;
  Array pipelined_all_reduce(const Array& flat, ReduceOp op, const ChannelProtocol& protocol,
                             const PipelinedTraffic& traffic) override;

  bool books_phases() const override { return false; }
  void book_phase(int to, int from, Bytes bytes_out, int messages, Seconds reducing) override;
  Seconds reduction_time(const Array& piece, ReduceOp op) const override;
  Array hold_scratch(const Array& like) override;
  void book_in_parallel(const std::shared_ptr<const ChannelRings>& rings, const ChannelProtocol& protocol,
                        const std::function<void(Communicator&, int)>& body) override;
  Array booked_values(const Array& flat, ReduceOp op, ReductionValues values,
                      const std::function<void()>& book) override;

  // Settles what the backend holds back (settle), then waits for the sends still in flight: a collective
  // ends when its last byte has left.
  void finish();

 protected:
  // What a backend holds back until this device moves data of its own; every verb that moves data calls it
  // first. Nothing here: the phase-booking backend simulates its booked run.
  virtual void settle() {}
  // A communicator of this backend and call over `group`.
  virtual std::unique_ptr<DeviceCommunicator> another(AxisGroup group, std::vector<int> dimensions,
                                                      std::vector<std::string> dimension_algorithms,
                                                      int channels) const;
  // The communicator of channel c of in_parallel: ring c's order, lane c, the protocol.
  std::unique_ptr<DeviceCommunicator> channel_communicator(const std::shared_ptr<const ChannelRings>& rings,
                                                           int c, const ChannelProtocol& protocol) const;
  // Takes a reduction's time on this device now (the phase-booking backend may add it to its booked run).
  virtual void take_reduction_time(const kernels::KernelResult& result);
  // The time of a reduction inside the collective: none where the protocol reduces in flight.
  Seconds in_collective_time(const kernels::KernelResult& result) const;
  // sendrecv_staged of pieces whose shapes both ends know (abstract data): only their size travels.
  void exchange_sizes(int to, Bytes bytes, int from);
  // The slowest hop of this communicator's ring, as {route latency, step overhead}: its own two hops and, in
  // a channel ring over several nodes (node blocks of dimensions_[0] ranks), the hop out of its node.
  std::pair<Seconds, Seconds> slowest_hop(int to_device, int from_device) const;
  Seconds step_overhead(int peer) const;
  // What of `overhead` a message of `bytes` still waits once its later slices hide the rest
  // (ChannelProtocol::slices).
  Seconds visible_overhead(Seconds overhead, Bytes bytes) const;
  int device_of(int peer) const;
  DeviceContext& context() const { return ctx_; }
  const std::string& collective() const { return collective_; }
  int lane() const { return lane_; }
  const ChannelProtocol& channel_protocol() const { return protocol_; }

  // The payload of every message whose contents both ends already know (sizes, wire traffic, booked runs):
  // never read, but put_async rejects a null payload.
  inline static int unread_payload = 0;

 private:
  // A send not waited for yet, and the buffer it reads, which stays allocated until then.
  struct PendingSend {
    simgrid::s4u::CommPtr transfer;
    Array chunk;
  };
  // Starts the side of `node_switch` in pipelined_all_reduce's traffic through it for `count` ranks from
  // `first`: an actor on the switch takes `each_way` bytes from each of them and sends them as many.
  void start_switch_ports(simgrid::s4u::Host* node_switch, int first, int count, Bytes each_way) const;
  // Logs a send of `bytes` to `peer` and counts it in the device's bytes sent.
  void note_send(int peer, Bytes bytes);
  simgrid::s4u::CommPtr post_send(int peer, const Array& chunk);
  // sendrecv's transfers (the receive posted first), the piece received not placed in device memory.
  Array exchange(int to, const Array& chunk, int from);
  // Sends `bytes` of data to device `to_device` after `overhead`, as the protocol's wire bytes.
  simgrid::s4u::CommPtr put(int to_device, void* payload, Bytes bytes, Seconds overhead);
  void pace(Bytes bytes);
  simgrid::s4u::CommPtr post_recv(int peer, Array** slot);
  // The chunk received from `peer` (the heap copy its sender made), not placed in device memory.
  Array arrived(int peer, Array* received);
  // `piece` placed in this device's memory as collective scratch.
  Array scratch(const Array& piece) const;

  // What every message reads comes first, in as few cache lines as can hold it: at scale each device's actor
  // resumes with them out of the cache.
  DeviceContext& ctx_;
  AxisGroup group_;
  int lane_ = 0;  // the mailboxes' lane (DeviceChannels::channel): in_parallel's channel
  // In a channel of in_parallel: how it moves its messages, and its ring (the node of each of its ranks, for
  // the step overhead of a message that crosses nodes).
  ChannelProtocol protocol_;
  std::shared_ptr<const ChannelRing> channel_ring_;
  // Shared with subgroups, so that finish() on the outermost communicator waits for every send.
  std::shared_ptr<std::vector<PendingSend>> pending_sends_;
  std::string collective_;
  int pipeline_chunks_;
  int channels_;
  std::string protocol_name_;
  std::vector<int> dimensions_;
  std::vector<std::string> dimension_algorithms_;
};

}  // namespace spmdsim::detail
