// Every algorithm's entry point and closed-form cost, for the registry (and for algorithms composed of
// others).
#pragma once

#include "spmdsim/collective_algorithms.hpp"

namespace spmdsim::collectives {

Array ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op);
double ring_all_reduce_cost(const CostInputs& c);
std::vector<Array> ring_all_gather(Communicator& comm, const Array& mine);
double ring_all_gather_cost(const CostInputs& c);
Array ring_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double ring_reduce_scatter_cost(const CostInputs& c);
std::vector<Array> pairwise_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double pairwise_all_to_all_cost(const CostInputs& c);
Array binomial_broadcast(Communicator& comm, const Array& flat, int root);
double binomial_broadcast_cost(const CostInputs& c);
Array binomial_reduce(Communicator& comm, const Array& flat, ReduceOp op, int root);
double binomial_reduce_cost(const CostInputs& c);

// all-gather, reduce-scatter and all-to-all algorithms
std::vector<Array> recursive_doubling_all_gather(Communicator& comm, const Array& mine);
double recursive_doubling_all_gather_cost(const CostInputs& c);
std::vector<Array> bruck_all_gather(Communicator& comm, const Array& mine);
double bruck_all_gather_cost(const CostInputs& c);
std::vector<Array> direct_all_gather(Communicator& comm, const Array& mine);
double direct_all_gather_cost(const CostInputs& c);
Array recursive_halving_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double recursive_halving_reduce_scatter_cost(const CostInputs& c);
Array pairwise_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double pairwise_reduce_scatter_cost(const CostInputs& c);
Array direct_reduce_scatter(Communicator& comm, const std::vector<Array>& blocks, ReduceOp op);
double direct_reduce_scatter_cost(const CostInputs& c);
std::vector<Array> bruck_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double bruck_all_to_all_cost(const CostInputs& c);
std::vector<Array> direct_all_to_all(Communicator& comm, const std::vector<Array>& blocks);
double direct_all_to_all_cost(const CostInputs& c);

}  // namespace spmdsim::collectives
