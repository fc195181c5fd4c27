#include "engine/host_transfer.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include <xbt/log.h>
#include <simgrid/s4u/Actor.hpp>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_transfer);

namespace spmdsim::detail {
namespace {

// What a transfer's sender puts: SimGrid refuses a null payload, and the receiver never reads it.
char nothing_carried;

}  // namespace

simgrid::s4u::Mailbox* TransferMailboxes::take() {
  if (free_.empty()) return simgrid::s4u::Mailbox::by_name("host-transfer-" + std::to_string(created_++));
  simgrid::s4u::Mailbox* mailbox = free_.back();
  free_.pop_back();
  return mailbox;
}

HostTransfer::HostTransfer(TransferMailboxes& mailboxes, simgrid::s4u::Host* from, simgrid::s4u::Host* to,
                           Bytes bytes, std::string_view peer_name) {
  XBT_VERB("%s -> %s: %.0f bytes posted", from->get_cname(), to->get_cname(), static_cast<double>(bytes));
  const auto size = static_cast<std::uint64_t>(bytes);
  simgrid::s4u::Host* here = simgrid::s4u::this_actor::get_host();
  simgrid::s4u::Mailbox* mailbox = mailboxes.take();
  simgrid::s4u::ActorPtr peer;
  if (here == to) {
    comm_ = mailbox->get_async<void>(&received_);
    peer = simgrid::s4u::Actor::create(std::string(peer_name), from, [&mailboxes, mailbox, size] {
      mailbox->put(&nothing_carried, size);
      mailboxes.give_back(mailbox);
    });
  } else if (here == from) {
    comm_ = mailbox->put_async(&nothing_carried, size);
    peer = simgrid::s4u::Actor::create(std::string(peer_name), to, [&mailboxes, mailbox] {
      mailbox->get<void>();
      mailboxes.give_back(mailbox);
    });
  } else {
    throw std::logic_error("a host transfer started by an actor on neither of its hosts");
  }
  peer_ = peer->get_pid();
}

}  // namespace spmdsim::detail
