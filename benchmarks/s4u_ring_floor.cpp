// The floor under psum_benchmark's aggregated modes: the ring all-reduce as abstract-aggr books it
// (booked_ring.cpp), each device's 2(p - 1) steps as one phase.
#include <algorithm>
#include <string>

#include <simgrid/s4u.hpp>

#include "s4u_psum_skeleton.hpp"

namespace spmdsim::benchmarks {

S4uPsumRun run_s4u_ring_floor(int devices, std::int64_t bytes_per_device, int* argc, char** argv) {
  namespace s4u = simgrid::s4u;
  return run_s4u_psum(devices, bytes_per_device, argc, argv, [](const RingDevice& ring) {
    const int p = ring.devices;
    const int messages = 2 * (p - 1);
    double bytes_out = 0;
    double reducing = 0;
    for (int step = 0; step < messages; ++step) {
      bytes_out += 4.0 * static_cast<double>(ring.piece_floats(ring.sent_piece(step)));
      if (step < p - 1) reducing += ring.reduction_s(ring.piece_floats(ring.received_piece(step)));
    }
    // One transfer each way, the other messages' latencies, the reductions (PhaseBookingCommunicator::simulate_phases).
    static int token;  // never read: put_async rejects a null payload
    int* received = nullptr;
    auto incoming = s4u::Mailbox::by_name("ring " + std::to_string(ring.rank))->get_async<int>(&received);
    auto outgoing =
        s4u::Mailbox::by_name("ring " + std::to_string((ring.rank + 1) % p))->put_async(&token, bytes_out);
    incoming->wait();
    outgoing->wait();
    const double latency = std::max(RingDevice::message_latency(ring.host, ring.next),
                                    RingDevice::message_latency(ring.previous, ring.host));
    s4u::this_actor::sleep_for((messages - 1) * latency);
    s4u::this_actor::execute(reducing * ring.host->get_speed());
  });
}

}  // namespace spmdsim::benchmarks
