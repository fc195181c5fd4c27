// A link's figures, per direction: builders make every link full duplex (one SimGrid link each way).
#pragma once

#include "spmdsim/units.hpp"

namespace spmdsim::topologies {

struct LinkSpec {
  BytesPerSecond bandwidth = 0;  // per direction
  Seconds latency = 0;
};

// Throws ValueError naming `what` when the bandwidth is not positive and finite or the latency is negative.
void check_link(const char* what, const LinkSpec& link);

}  // namespace spmdsim::topologies
