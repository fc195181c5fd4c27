#include "engine/direct_transfer.hpp"

#include <cstdint>

#include <xbt/log.h>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_transfer);

namespace spmdsim::detail {

// Marked STARTING before its hosts are set: Comm::sendto_async sets the source first, which in SimGrid 3.32
// vetoes the start until the destination is set too, and a vetoed activity would end a run beside host
// copies (copy_pause.hpp).
simgrid::s4u::CommPtr start_direct_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes) {
  XBT_VERB("%s -> %s: %.0f bytes posted", from->get_cname(), to->get_cname(), static_cast<double>(bytes));
  auto comm = simgrid::s4u::Comm::sendto_init();
  comm->set_state(simgrid::s4u::Activity::State::STARTING);
  comm->set_source(from)->set_destination(to)->set_payload_size(static_cast<std::uint64_t>(bytes))->start();
  return comm;
}

}  // namespace spmdsim::detail
