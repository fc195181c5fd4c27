// SimGrid's network/TCP-gamma (the TCP window) and the rate a transfer may set for itself. SimGrid 3.32 bounds
// a transfer by min(its own rate, TCP-gamma / (2 x latency)), and a bound of 0 means none: under TCP-gamma 0,
// the documented "no window", a transfer's own rate is dropped with the window. spmdsim needs those rates (a
// booked NCCL channel moves at its channel's rate), so the engine hands SimGrid a window no transfer can reach
// in place of 0: the same unbounded transfers (the route's slowest link is their bound either way), and each
// transfer's own rate kept. The commands still show it as 0.
#pragma once

namespace spmdsim::detail {

inline constexpr double kUnreachableTcpWindow = 1e30;  // bytes

}  // namespace spmdsim::detail
