// Asynchronous collectives, as XLA's all-reduce-start / all-reduce-done and all-gather-start /
// all-gather-done. Inside a pmapped function, psum_start / pmean_start (an array) and all_gather_start /
// psum_scatter_start (a pytree, its leaves joined into calls as the synchronous tree collectives join them)
// queue the collective on the calling device's communication stream and return at once; the device's
// program goes on computing while the stream runs it with the configured algorithm; wait() blocks the
// program until it is done and gives the result, as the synchronous collective would have.
//
// Each device has one stream per pmap call: it runs its collectives one after the other in the order they
// were started, on a channel namespace of its own, so they match across devices in that order and never with
// the program's own messages. The stream's reductions run on the device's host next to the program's
// compute and share it (SimGrid divides a host's speed between concurrent executions). Reports count the
// stream's time as DeviceTimes::stream and the program's waits as exposed communication; a collective still
// running when the function returns is waited for then. An error on the stream stops the call as an error
// of the program would.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "spmdsim/array.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

class PendingCollective;
class PendingTree;

namespace detail {
struct StreamJob;
class CommStream;
// psum_start and pmean_start (mean: divide by the group size when waited for).
PendingCollective start_all_reduce(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
                                   bool mean, const CollectiveOptions& options);
// all_gather_start and psum_scatter_start: `run` is the synchronous tree collective, run on the stream.
PendingTree start_tree_collective(const char* name, const AxisName& axis_name, const AxisIndexGroups& groups,
                                  std::function<Tree()> run);
}  // namespace detail

// A collective started on the communication stream, not waited for yet.
class PendingCollective {
 public:
  PendingCollective() = default;
  // On the device that started it, once: blocks its program until the collective is done and returns the
  // result. Throws std::logic_error when called twice, elsewhere, or on an empty handle.
  Array wait();
  // Started and not waited for.
  bool valid() const { return job_ != nullptr; }

 private:
  friend PendingCollective detail::start_all_reduce(const Array& x, const AxisName& axis_name,
                                                    const AxisIndexGroups& groups, bool mean,
                                                    const CollectiveOptions& options);
  detail::CommStream* stream_ = nullptr;
  std::shared_ptr<detail::StreamJob> job_;
  double divisor_ = 0;  // pmean's group size, to divide the sum by once it is waited for; 0 for psum
};

// A tree collective started on the communication stream, not waited for yet.
class PendingTree {
 public:
  PendingTree() = default;
  // As PendingCollective::wait, giving the tree the synchronous collective would have.
  Tree wait();
  bool valid() const { return job_ != nullptr; }

 private:
  friend PendingTree detail::start_tree_collective(const char* name, const AxisName& axis_name,
                                                   const AxisIndexGroups& groups, std::function<Tree()> run);
  detail::CommStream* stream_ = nullptr;
  std::shared_ptr<detail::StreamJob> job_;
};

PendingCollective psum_start(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
                             const CollectiveOptions& options = {});
PendingCollective pmean_start(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
                              const CollectiveOptions& options = {});

// all_gather and psum_scatter of a pytree (collectives.hpp), started on the stream.
PendingTree all_gather_start(const Tree& x, const AxisName& axis_name, int axis = 0, bool tiled = false,
                             const AxisIndexGroups& groups = {}, const CollectiveOptions& options = {});
PendingTree psum_scatter_start(const Tree& x, const AxisName& axis_name, int scatter_dimension = 0,
                               bool tiled = false, const AxisIndexGroups& groups = {},
                               const CollectiveOptions& options = {});

}  // namespace spmdsim
