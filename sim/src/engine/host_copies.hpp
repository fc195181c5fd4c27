// The host's asynchronous copies to the devices (Simulation::device_put_sharded and friends): each device's
// copies run one after another in the order the host enqueued them, as on a GPU's host-to-device copy
// queue, each one's leaves together over the device's host links. One actor per device with queued copies
// carries them out; it lives across pmap calls (Runtime::run ends a call without waiting for it).
// Each copy's transfer has a receiving actor on the device (host_transfer.hpp), which ends with it.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "engine/host_transfer.hpp"
#include "engine/platform_hosts.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// One device's part of one put: its leaves' bytes, and whether they have arrived.
class HostCopy {
 public:
  explicit HostCopy(std::vector<Bytes> leaf_bytes);

  const std::vector<Bytes>& leaf_bytes() const { return leaf_bytes_; }
  bool arrived() const { return arrived_; }
  // A device actor: blocks until the copy has arrived (at once if it has).
  void wait_arrival() const;
  // The copying actor, once every leaf is on the device.
  void mark_arrived();

 private:
  std::vector<Bytes> leaf_bytes_;
  bool arrived_ = false;
  simgrid::s4u::SemaphorePtr arrival_;  // released once on arrival; each waiter takes it and gives it back
};

class HostCopyQueue {
 public:
  HostCopyQueue(const PlatformHosts& hosts, TransferMailboxes& mailboxes)
      : hosts_(hosts), mailboxes_(mailboxes) {}

  // The host, between calls: queues a copy to `device` of leaves of these sizes and returns it at once; its
  // transfer starts when the device's earlier copies have arrived.
  std::shared_ptr<HostCopy> enqueue(int device, std::vector<Bytes> leaf_bytes);
  // Whether a copying actor is alive (copies queued or in flight).
  bool busy() const { return !copiers_.empty() || !receivers_.empty(); }
  // The copying actors alive: the copiers and their transfers' receivers.
  std::size_t copier_count() const { return copiers_.size() + receivers_.size(); }
  bool is_copier(aid_t actor) const { return copiers_.contains(actor) || receivers_.contains(actor); }
  // Called when any actor starts, inside its creation, so that a receiver counts as copying before any
  // other actor can see it alive.
  void actor_started(const simgrid::s4u::Actor& actor);
  // Called when any actor ends: forgets it if it was a copying actor.
  void forget(aid_t actor);

 private:
  // A device's copying actor: sends the queued copies one after another until none is left.
  void copy_queued(int device);

  const PlatformHosts& hosts_;
  TransferMailboxes& mailboxes_;
  std::map<int, std::deque<std::shared_ptr<HostCopy>>> queued_;  // by device; the front one is in flight
  std::set<int> copied_to_;                                      // the devices with an alive copier
  std::map<aid_t, int> copiers_;                                 // alive copier -> its device
  std::set<aid_t> receivers_;                                    // alive receivers of copies
};

}  // namespace spmdsim::detail
