// NCCL's NVLS all-reduce (NVLink SHARP): the node's NVSwitch reduces. Each rank reads its slice of the vector
// reduced by the switch from every rank's copy (multimem load-reduce) and stores it to every rank at once
// (multimem store), the two pipelined, so a rank's switch port carries (p + 1) / p of the vector each way
// where a ring's carries 2 (p - 1) / p, and no device reduces anything (Communicator::pipelined_all_reduce).
// On a node with NCCL's NVLS figures the call runs after NCCL's 25 us and its pipeline's fill, at the tuner's
// rate less the chunk steps' latency of the call's chunk (nccl_nvls.hpp).
//
// Cost, the switch's ports as links of alpha / 2 each (one hop of a device-to-device route), both ways at once:
// alpha / 2 + ((p + 1) / p) n beta.
#include <fmt/format.h>

#include "collectives/algorithms.hpp"
#include "collectives/nccl_nvls.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::collectives {

Array nvls_all_reduce(Communicator& comm, const Array& flat, ReduceOp op) {
  if (comm.size() == 1) return flat;
  if (!comm.switch_reduces())
    throw ValueError(fmt::format(
        "all_reduce algorithm 'nvls' needs every device of the group on one node whose NVSwitch reduces "
        "(NVLink SHARP: the dgx_h100, hgx_h200 and dgx_b200 presets, one node or a node of --nodes); this "
        "group of {} devices is not",
        comm.size()));
  const auto bytes = static_cast<Bytes>(flat.nbytes());
  return comm.pipelined_all_reduce(flat, op, nvls_protocol(comm, static_cast<double>(bytes)),
                                   {.switch_each_way = bytes + bytes / comm.size()});
}

double nvls_all_reduce_cost(const CostInputs& c) {
  if (c.p == 1) return 0;
  return c.alpha / 2 + (c.p + 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
