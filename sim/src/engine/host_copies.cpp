#include "engine/host_copies.hpp"

#include <numeric>
#include <string_view>
#include <utility>

#include <xbt/log.h>
#include <simgrid/s4u/Host.hpp>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_transfer);

namespace spmdsim::detail {

HostCopy::HostCopy(std::vector<Bytes> leaf_bytes)
    : leaf_bytes_(std::move(leaf_bytes)), arrival_(simgrid::s4u::Semaphore::create(0)) {}

void HostCopy::wait_arrival() const {
  if (arrived_) return;
  arrival_->acquire();
  arrival_->release();  // for the next waiter
}

void HostCopy::mark_arrived() {
  arrived_ = true;
  arrival_->release();
}

namespace {

// The name of a copy's receiving actor, by which its creation is recognised.
constexpr std::string_view kReceiverName = "host-copy-receiver";

}  // namespace

std::shared_ptr<HostCopy> HostCopyQueue::enqueue(int device, std::vector<Bytes> leaf_bytes) {
  auto copy = std::make_shared<HostCopy>(std::move(leaf_bytes));
  queued_[device].push_back(copy);
  if (copied_to_.insert(device).second) {
    const auto copier = simgrid::s4u::Actor::create("host_copies", hosts_.host_cpu(device),
                                                    [this, device] { copy_queued(device); });
    copiers_.emplace(copier->get_pid(), device);
  }
  return copy;
}

void HostCopyQueue::actor_started(const simgrid::s4u::Actor& actor) {
  if (actor.get_name() == kReceiverName) receivers_.insert(actor.get_pid());
}

void HostCopyQueue::forget(aid_t actor) {
  if (const auto copier = copiers_.find(actor); copier != copiers_.end()) {
    copied_to_.erase(copier->second);
    copiers_.erase(copier);
  } else {
    receivers_.erase(actor);
  }
}

void HostCopyQueue::copy_queued(int device) {
  auto& queue = queued_[device];
  while (!queue.empty()) {
    const std::shared_ptr<HostCopy> copy = queue.front();
    const auto& leaf_bytes = copy->leaf_bytes();
    const Bytes bytes = std::accumulate(leaf_bytes.begin(), leaf_bytes.end(), Bytes{0});
    HostTransfer(mailboxes_, hosts_.host_cpu(device), hosts_.device(device), bytes, kReceiverName).wait();
    copy->mark_arrived();
    XBT_VERB("device %d: a put's copy of %zu leaves arrived", device, copy->leaf_bytes().size());
    queue.pop_front();
  }
}

}  // namespace spmdsim::detail
