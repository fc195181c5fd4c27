// The asynchronous collectives and their handles: the program checks the call and queues the collective on
// its device's communication stream; the stream runs it as the synchronous collective would.
#include "spmdsim/async_collectives.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "api/collective_calls.hpp"
#include "engine/comm_stream.hpp"

namespace spmdsim {

namespace detail {

PendingCollective start_all_reduce(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
                                   bool mean, const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  // JAX's errors come from the program, at the call, as a synchronous psum would raise them.
  const auto group_size = static_cast<double>(my_group(ctx, axis_name, groups).size());
  const char* name = mean ? "pmean" : "psum";
  PendingCollective pending;
  pending.stream_ = &ctx.stream();
  pending.job_ = pending.stream_->start(name, [x, axis_name, groups, options, name] {
    return Tree(all_reduce(x, axis_name, groups, ReduceOp::sum, name, options));
  });
  pending.divisor_ = mean ? group_size : 0;
  return pending;
}

PendingTree start_tree_collective(const char* name, const AxisName& axis_name, const AxisIndexGroups& groups,
                                  std::function<Tree()> run) {
  DeviceContext& ctx = device_for(axis_name);
  my_group(ctx, axis_name, groups);  // a bad group is the program's error, at the call
  PendingTree pending;
  pending.stream_ = &ctx.stream();
  pending.job_ = pending.stream_->start(name, std::move(run));
  return pending;
}

}  // namespace detail

Array PendingCollective::wait() {
  if (!job_) throw std::logic_error("wait() on a collective that was not started or was already waited for");
  if (detail::current_device() != &stream_->program())
    throw std::logic_error("wait() on a collective started by another device, or in another pmap call");
  Array total = stream_->wait(*std::exchange(job_, nullptr)).leaf();
  return divisor_ == 0 ? total : detail::mean_of_sum(total, divisor_);
}

Tree PendingTree::wait() {
  if (!job_) throw std::logic_error("wait() on a collective that was not started or was already waited for");
  if (detail::current_device() != &stream_->program())
    throw std::logic_error("wait() on a collective started by another device, or in another pmap call");
  return stream_->wait(*std::exchange(job_, nullptr));
}

PendingCollective psum_start(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
                             const CollectiveOptions& options) {
  return detail::start_all_reduce(x, axis_name, groups, false, options);
}

PendingCollective pmean_start(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
                              const CollectiveOptions& options) {
  return detail::start_all_reduce(x, axis_name, groups, true, options);
}

PendingTree all_gather_start(const Tree& x, const AxisName& axis_name, int axis, bool tiled,
                             const AxisIndexGroups& groups, const CollectiveOptions& options) {
  return detail::start_tree_collective("all_gather", axis_name, groups,
                                       [x, axis_name, axis, tiled, groups, options] {
                                         return all_gather(x, axis_name, axis, tiled, groups, options);
                                       });
}

PendingTree psum_scatter_start(const Tree& x, const AxisName& axis_name, int scatter_dimension, bool tiled,
                               const AxisIndexGroups& groups, const CollectiveOptions& options) {
  return detail::start_tree_collective(
      "psum_scatter", axis_name, groups, [x, axis_name, scatter_dimension, tiled, groups, options] {
        return psum_scatter(x, axis_name, scatter_dimension, tiled, groups, options);
      });
}

}  // namespace spmdsim
