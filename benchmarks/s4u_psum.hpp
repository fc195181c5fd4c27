// Plain S4U programs that simulate psum_benchmark's psum without spmdsim: what SimGrid alone costs for the
// same simulated work on the same platform (topologies::switch_cluster(default_switch_cluster(p)) under the
// network settings it carries). No values, no memory ledger, no report, no pmap: whatever spmdsim costs
// beyond these is its own.
//
//   run_s4u_ring_floor  the skeleton abstract-aggr simulates: each ring phase booked as one transfer each
//                       way, a sleep for the other messages' latencies and one execution for the reductions,
//                       as PhaseBookingCommunicator::settle books them (s4u_ring_floor.cpp);
//   run_s4u_ring        the per-message ring abstract simulates: 2(p - 1) steps of one chunk each way and one
//                       execution per reduce-scatter reduction, as DeviceCommunicator::sendrecv and combine
//                       run them (s4u_ring.cpp).
#pragma once

#include <cstdint>

namespace spmdsim::benchmarks {

struct S4uPsumRun {
  double setup_s = 0;            // wall: engine and platform
  double run_s = 0;              // wall: the actors, from creation to the engine's end
  double psum_simulated_s = 0;   // longest all-reduce over the devices (simulated)
  double total_simulated_s = 0;  // the engine's clock at the end
};

// argc/argv: SimGrid's command line (--cfg=...), as Simulation takes it; it overrides the platform's
// settings.
S4uPsumRun run_s4u_ring_floor(int devices, std::int64_t bytes_per_device, int* argc, char** argv);
S4uPsumRun run_s4u_ring(int devices, std::int64_t bytes_per_device, int* argc, char** argv);

}  // namespace spmdsim::benchmarks
