// Platforms for tests: the switch cluster with round numbers, and a variant whose compute is free so that
// timing tests see communication alone.
#pragma once

#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim::testing {

// Device links: 100 GB/s and 1 us per direction (alpha = 2 us between devices); host links 10 GB/s, 1 us.
topologies::SwitchClusterSpec round_numbers_cluster(int num_devices);
// The same with infinite FLOP/s and memory bandwidth and no launch overhead: compute takes no time.
topologies::SwitchClusterSpec free_compute_cluster(int num_devices);

}  // namespace spmdsim::testing
