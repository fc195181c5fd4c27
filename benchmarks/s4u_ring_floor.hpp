// The floor under psum_benchmark's aggregated modes: what SimGrid alone costs to simulate the same call.
//
// A plain S4U program on the same platform (topologies::switch_cluster(default_switch_cluster(p))) runs the
// skeleton that spmdsim's abstract-aggr psum simulates, and nothing else: one actor per device; its input
// sent from the host CPU; one ring phase booked as one transfer each way with its neighbours, a sleep for the
// other messages' latencies and one execution for the reductions, as DeviceCommunicator::flush_phase does;
// its result sent back to the host. No values, no memory ledger, no report, no pmap. Whatever spmdsim costs
// beyond this is its own; this much any S4U simulation of the call pays.
#pragma once

#include <cstdint>

namespace spmdsim::benchmarks {

struct RingFloorRun {
  double setup_s = 0;            // wall: engine and platform
  double run_s = 0;              // wall: the actors, from creation to the engine's end
  double psum_simulated_s = 0;   // longest ring phase over the devices (simulated)
  double total_simulated_s = 0;  // the engine's clock at the end
};

// argc/argv: SimGrid's command line (--cfg=...), as Simulation takes it.
RingFloorRun run_s4u_ring_floor(int devices, std::int64_t bytes_per_device, int* argc, char** argv);

}  // namespace spmdsim::benchmarks
