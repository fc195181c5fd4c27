// Every algorithm's entry point, for the registry (and for algorithms composed of others).
#pragma once

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

Array ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine);
Array ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
std::vector<Array> pairwise_all_to_all(Communicator& comm, const std::vector<Array>& blocks);

}  // namespace spmdsim::collectives
