// The floor under psum_benchmark's per-message abstract mode: the ring all-reduce as spmdsim's
// ring_all_reduce runs it over DeviceCommunicator, one message per piece and step, one execution per
// reduction.
#include <string>

#include <simgrid/s4u.hpp>

#include "s4u_psum_skeleton.hpp"

namespace spmdsim::benchmarks {

S4uPsumRun run_s4u_ring(int devices, std::int64_t bytes_per_device, int* argc, char** argv) {
  namespace s4u = simgrid::s4u;
  return run_s4u_psum(devices, bytes_per_device, argc, argv, [](const RingDevice& ring) {
    const int p = ring.devices;
    // One mailbox per receiver: its only sender is its left neighbour, whose steps are matched in order.
    s4u::Mailbox* from_previous = s4u::Mailbox::by_name("ring " + std::to_string(ring.rank));
    s4u::Mailbox* to_next = s4u::Mailbox::by_name("ring " + std::to_string((ring.rank + 1) % p));
    static int token;  // never read: put_async rejects a null payload
    for (int step = 0; step < 2 * (p - 1); ++step) {
      // The receive posted before either wait, as DeviceCommunicator::sendrecv does.
      int* received = nullptr;
      auto incoming = from_previous->get_async<int>(&received);
      auto outgoing =
          to_next->put_async(&token, 4.0 * static_cast<double>(ring.piece_floats(ring.sent_piece(step))));
      incoming->wait();
      outgoing->wait();
      if (step < p - 1)
        s4u::this_actor::execute(ring.reduction_s(ring.piece_floats(ring.received_piece(step))) *
                                 ring.host->get_speed());
    }
  });
}

}  // namespace spmdsim::benchmarks
