#include "engine/direct_transfer.hpp"

#include <cstdint>

namespace spmdsim::detail {

// Marked STARTING before its hosts are set: Comm::sendto_async sets the source first, which in SimGrid 3.32
// vetoes the start until the destination is set too, and a vetoed activity would end a run beside host
// copies (copy_pause.hpp).
simgrid::s4u::CommPtr start_direct_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, Bytes bytes) {
  auto comm = simgrid::s4u::Comm::sendto_init();
  comm->set_state(simgrid::s4u::Activity::State::STARTING);
  comm->set_source(from)->set_destination(to)->set_payload_size(static_cast<std::uint64_t>(bytes))->start();
  return comm;
}

}  // namespace spmdsim::detail
