// psum_start / pmean_start and their handle: the program checks the call and queues the all-reduce on its
// device's communication stream; the stream runs it as psum would.
#include "spmdsim/async_collectives.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "api/collective_calls.hpp"
#include "engine/comm_stream.hpp"

namespace spmdsim {

namespace detail {

PendingCollective start_all_reduce(const Array& x, std::string_view axis_name, const AxisIndexGroups& groups,
                                   bool mean, const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  // JAX's errors come from the program, at the call, as a synchronous psum would raise them.
  const auto group_size = static_cast<double>(my_group(ctx, groups).size());
  const char* name = mean ? "pmean" : "psum";
  PendingCollective pending;
  pending.stream_ = &ctx.stream();
  pending.job_ = pending.stream_->start(name, [x, axis = std::string(axis_name), groups, options, name] {
    return all_reduce(x, axis, groups, ReduceOp::sum, name, options);
  });
  pending.divisor_ = mean ? group_size : 0;
  return pending;
}

}  // namespace detail

Array PendingCollective::wait() {
  if (!job_) throw std::logic_error("wait() on a collective that was not started or was already waited for");
  if (detail::current_device() != &stream_->program())
    throw std::logic_error("wait() on a collective started by another device, or in another pmap call");
  Array total = stream_->wait(*std::exchange(job_, nullptr));
  return divisor_ == 0 ? total : detail::mean_of_sum(total, divisor_);
}

PendingCollective psum_start(const Array& x, std::string_view axis_name, const AxisIndexGroups& groups,
                             const CollectiveOptions& options) {
  return detail::start_all_reduce(x, axis_name, groups, false, options);
}

PendingCollective pmean_start(const Array& x, std::string_view axis_name, const AxisIndexGroups& groups,
                              const CollectiveOptions& options) {
  return detail::start_all_reduce(x, axis_name, groups, true, options);
}

}  // namespace spmdsim
