// Communicator over SimGrid: each chunk is one message on the channel between two devices, whose
// simulated size is the chunk's byte size; received chunks are collective scratch in device memory.
#pragma once

#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>

#include "device_context.hpp"
#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::detail {

class DeviceCommunicator final : public Communicator {
 public:
  // group: the call ranks (axis indices) taking part, in group order; ctx's rank must be among them.
  DeviceCommunicator(DeviceContext& ctx, std::vector<int> group, std::string collective, int pipeline_chunks,
                     std::vector<int> dimensions);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_.size()); }
  void send(int peer, const Array& chunk) override;
  void send_and_wait(int peer, const Array& chunk) override;
  Array recv(int peer) override;
  Array sendrecv(int to, const Array& chunk, int from) override;
  Array combine(const Array& a, const Array& b, ReduceOp op) override;
  int pipeline_chunks() const override { return pipeline_chunks_; }
  std::vector<int> dimensions() const override { return dimensions_; }
  std::unique_ptr<Communicator> subgroup(std::vector<int> members) override;

  // Waits for the sends still in flight: a collective ends when its last byte has left.
  void finish();

 private:
  simgrid::s4u::CommPtr post_send(int peer, const Array& chunk);
  simgrid::s4u::CommPtr post_recv(int peer, Array** slot);
  Array take(Array* received);
  int device_of(int peer) const;

  DeviceContext& ctx_;
  std::vector<int> group_;
  int rank_ = -1;
  std::string collective_;
  int pipeline_chunks_;
  std::vector<int> dimensions_;
  // Shared with subgroups, so that finish() on the outermost communicator waits for every send.
  std::shared_ptr<std::vector<simgrid::s4u::CommPtr>> pending_sends_;
};

}  // namespace spmdsim::detail
