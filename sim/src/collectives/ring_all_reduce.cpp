// Ring all-reduce: ring reduce-scatter of the p chunks of the array, then ring all-gather of the reduced
// chunks. Bandwidth-optimal; the latency term grows with p.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, §5.3): 2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

Array ring_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  Array mine = ring_reduce_scatter(comm, split_flat(flat, comm.size()), op);
  return join_flat(ring_all_gather(comm, mine, split_flat_shapes(flat, comm.size())));
}

double ring_all_reduce_cost(const CostInputs& c) {
  const double share = (c.p - 1.0) / c.p;
  return 2 * (c.p - 1) * c.alpha + 2 * share * c.n * c.beta + share * c.n * c.gamma;
}

}  // namespace spmdsim::collectives
