// A transfer between a device and its host CPU, whose values are handed over directly: the device's memory,
// or the host's, takes them.
//
// A copy of several leaves between a device and its host is one transfer of their total bytes. Under the
// alpha-beta model the presets run, the last of several transfers started together on one route arrives when
// one transfer of their total would (latency + total bytes / bandwidth), and the callers wait for the last.
//
// A transfer is a mailbox communication between the calling actor and a peer actor started for it on the
// other host, each waiting for its own side. SimGrid 3.32's host-to-host comms (Comm::sendto) would need no
// peer, but it detaches them all into one list and removes each finished one by a linear search of that
// list: with every device's transfer in flight at once, quadratic in the device count (half of a psum's
// whole call at 32,768 devices). An actor's own list holds only what it waits for: here, one transfer.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "spmdsim/units.hpp"

namespace spmdsim::detail {

// The mailboxes transfers meet in, one transfer at a time each, so that a transfer never meets another's
// peer. SimGrid keeps every mailbox to the end, so they are reused: as many exist as transfers were ever in
// flight together.
class TransferMailboxes {
 public:
  simgrid::s4u::Mailbox* take();
  // Once the transfer that took it has met its peer (the mailbox is empty again).
  void give_back(simgrid::s4u::Mailbox* mailbox) { free_.push_back(mailbox); }

 private:
  std::vector<simgrid::s4u::Mailbox*> free_;
  std::size_t created_ = 0;
};

class HostTransfer {
 public:
  // Starts `bytes` from `from` to `to` now. The calling actor must be on one of the two hosts; the peer is
  // started on the other, named `peer_name`.
  HostTransfer(TransferMailboxes& mailboxes, simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes,
               std::string_view peer_name = "host-transfer");
  HostTransfer(const HostTransfer&) = delete;  // the communication writes into received_
  HostTransfer& operator=(const HostTransfer&) = delete;

  // Blocks the calling actor until the bytes have arrived.
  void wait() { comm_->wait(); }
  Seconds finish_time() const { return comm_->get_finish_time(); }
  // The actor carrying the other side; it ends when the transfer does.
  aid_t peer() const { return peer_; }

 private:
  void* received_ = nullptr;  // the receiving side's slot: nothing is carried
  simgrid::s4u::CommPtr comm_;
  aid_t peer_ = -1;
};

}  // namespace spmdsim::detail
