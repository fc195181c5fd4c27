#include "device_communicator.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Mailbox.hpp>

#include "kernels/kernels.hpp"

namespace spmdsim::detail {

DeviceCommunicator::DeviceCommunicator(DeviceContext& ctx, std::vector<int> group, std::string collective,
                                       int pipeline_chunks, std::vector<int> dimensions)
    : ctx_(ctx),
      group_(std::move(group)),
      collective_(std::move(collective)),
      pipeline_chunks_(pipeline_chunks),
      dimensions_(std::move(dimensions)),
      pending_sends_(std::make_shared<std::vector<simgrid::s4u::CommPtr>>()) {
  rank_ = static_cast<int>(std::find(group_.begin(), group_.end(), ctx_.rank()) - group_.begin());
  if (rank_ == static_cast<int>(group_.size())) throw std::logic_error("a communicator without this device");
}

std::unique_ptr<Communicator> DeviceCommunicator::subgroup(std::vector<int> members) {
  std::vector<int> call_ranks;
  for (int m : members) call_ranks.push_back(group_.at(static_cast<std::size_t>(m)));
  auto sub = std::make_unique<DeviceCommunicator>(ctx_, std::move(call_ranks), collective_, pipeline_chunks_,
                                                  std::vector<int>{static_cast<int>(members.size())});
  sub->pending_sends_ = pending_sends_;
  return sub;
}

int DeviceCommunicator::device_of(int peer) const { return ctx_.device_at(group_.at(static_cast<std::size_t>(peer))); }

simgrid::s4u::CommPtr DeviceCommunicator::post_send(int peer, const Array& chunk) {
  auto* channel = ctx_.runtime().channel(ctx_.device(), device_of(peer));
  ctx_.times().bytes_sent += static_cast<Bytes>(chunk.nbytes());
  // The receiver takes ownership of the heap copy of the handle (the storage itself is shared).
  return channel->put_async(new Array(chunk), chunk.nbytes());
}

simgrid::s4u::CommPtr DeviceCommunicator::post_recv(int peer, Array** slot) {
  return ctx_.runtime().channel(device_of(peer), ctx_.device())->get_async<Array>(slot);
}

Array DeviceCommunicator::take(Array* received) {
  std::unique_ptr<Array> owned(received);
  return ctx_.place(*owned, MemoryTag::collective_scratch, collective_);
}

void DeviceCommunicator::send(int peer, const Array& chunk) { pending_sends_->push_back(post_send(peer, chunk)); }

void DeviceCommunicator::send_and_wait(int peer, const Array& chunk) { post_send(peer, chunk)->wait(); }

Array DeviceCommunicator::recv(int peer) {
  Array* received = nullptr;
  post_recv(peer, &received)->wait();
  return take(received);
}

Array DeviceCommunicator::sendrecv(int to, const Array& chunk, int from) {
  Array* received = nullptr;
  auto incoming = post_recv(from, &received);
  auto outgoing = post_send(to, chunk);
  incoming->wait();
  outgoing->wait();
  return take(received);
}

Array DeviceCommunicator::combine(const Array& a, const Array& b, ReduceOp op) {
  kernels::KernelResult result = op == ReduceOp::sum   ? kernels::add(a, b)
                                 : op == ReduceOp::max ? kernels::maximum(a, b)
                                                       : kernels::minimum(a, b);
  Array placed = ctx_.place(result.value, MemoryTag::collective_scratch, collective_);
  // Inside one collective kernel: the roofline without a launch of its own.
  const DeviceSpec& spec = ctx_.spec();
  ctx_.execute(spec.op_time(result.cost.flops, result.cost.bytes, result.value.dtype()) - spec.launch_overhead);
  return placed;
}

void DeviceCommunicator::finish() {
  if (!pending_sends_->empty()) simgrid::s4u::Comm::wait_all(*pending_sends_);
  pending_sends_->clear();
}

}  // namespace spmdsim::detail
