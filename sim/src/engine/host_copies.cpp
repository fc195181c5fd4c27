#include "engine/host_copies.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include <xbt/log.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include "engine/direct_transfer.hpp"

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

std::shared_ptr<HostCopy> HostCopyQueue::enqueue(int device, std::vector<Bytes> leaf_bytes) {
  auto copy = std::make_shared<HostCopy>(std::move(leaf_bytes));
  queued_[device].push_back(copy);
  if (!copiers_.contains(device)) {
    copiers_[device] = simgrid::s4u::Actor::create("host_copies", hosts_.host_cpu(device), [this, device] {
                         copy_queued(device);
                       })->get_pid();
  }
  return copy;
}

bool HostCopyQueue::is_copier(aid_t actor) const {
  return std::any_of(copiers_.begin(), copiers_.end(),
                     [actor](const auto& entry) { return entry.second == actor; });
}

void HostCopyQueue::forget(aid_t actor) {
  std::erase_if(copiers_, [actor](const auto& entry) { return entry.second == actor; });
}

void HostCopyQueue::copy_queued(int device) {
  auto& queue = queued_[device];
  while (!queue.empty()) {
    const std::shared_ptr<HostCopy> copy = queue.front();
    const auto& leaf_bytes = copy->leaf_bytes();
    const Bytes bytes = std::accumulate(leaf_bytes.begin(), leaf_bytes.end(), Bytes{0});
    start_direct_transfer(hosts_.host_cpu(device), hosts_.device(device), bytes)->wait();
    copy->mark_arrived();
    XBT_VERB("device %d: a put's copy of %zu leaves arrived", device, copy->leaf_bytes().size());
    queue.pop_front();
  }
}

}  // namespace spmdsim::detail
