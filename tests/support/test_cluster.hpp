// Platforms for tests: the switch cluster with round numbers, a variant whose compute is free so that
// timing tests see communication alone, a full-mesh node with RCCL's figures, and an SMPI cluster file.
#pragma once

#include <string>

#include "spmdsim/platform.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"

namespace spmdsim::testing {

// The round-numbers device's launch, paid by every kernel: each op and each collective.
constexpr double kRoundNumbersLaunch = 1e-6;

// Device links: 100 GB/s and 1 us per direction (alpha = 2 us between devices); host links 10 GB/s, 1 us.
topologies::SwitchClusterSpec round_numbers_cluster(int num_devices);
// The same with infinite FLOP/s and memory bandwidth and no launch overhead: compute takes no time.
topologies::SwitchClusterSpec free_compute_cluster(int num_devices);

// One full-mesh node of 8 devices with `rccl` as its RCCL figures: pair links of 100 GB/s and 1 us, the
// free-compute device.
PlatformBuilder rccl_mesh_node(const RcclNode& rccl);

// A platform file as smpirun takes it, with no spmdsim property: SimGrid's <cluster> of node-0..node-3, each
// on a private 125 MB/s, 50 us link to a 2.25 GB/s, 500 us backbone.
std::string smpi_cluster_xml();

}  // namespace spmdsim::testing
