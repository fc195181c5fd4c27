// jax.lax's collectives, called inside a pmapped function. Each runs the configured algorithm for its
// kind: real chunks of the data travel as SimGrid messages whose size is the chunk's byte size. Shapes and
// errors follow jax.lax. Called outside pmap (or with a name pmap did not bind) they raise NameError.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {

// Groups of axis indices that reduce among themselves (jax's axis_index_groups); empty: one group of all.
using AxisIndexGroups = std::vector<std::vector<int>>;

// jax.lax's axis_name: one name pmap bound, or a tuple of them (psum(x, {"i", "j"})), as under nested pmap.
// A tuple runs the collective over every device that differs only along the named axes, ordered by the
// names as given (the first one major): its axis index is the position in that order, its axis size the
// product of the axes' sizes. An inner pmap's name shadows an outer one's of the same spelling.
class AxisName {
 public:
  AxisName(const char* name) : names_{std::string(name)} {}
  AxisName(std::string_view name) : names_{std::string(name)} {}
  AxisName(const std::string& name) : names_{name} {}
  AxisName(std::initializer_list<std::string> names) : names_(names), tuple_(true) {}
  AxisName(std::vector<std::string> names) : names_(std::move(names)), tuple_(true) {}

  const std::vector<std::string>& names() const { return names_; }
  // As Python prints it: i, or ('i', 'j').
  std::string str() const;

 private:
  std::vector<std::string> names_;
  bool tuple_ = false;
};

// Per-call choices, beyond JAX's arguments; left empty they take the simulation's.
struct CollectiveOptions {
  std::string algorithm;    // a registered name, or "auto" for the lowest predicted time
  int pipeline_chunks = 0;  // pieces a pipelining algorithm cuts its message into; 0: the simulation's
  int channels = 0;         // channels a channel-parallel algorithm runs (nccl_ring); 0: the simulation's
  // nccl_ring's protocol on a platform with NCCL's figures, as NCCL_PROTO: "LL", "LL128" or "Simple";
  // empty: the simulation's (SimulationOptions::protocol).
  std::string protocol;
  // What multidim runs along each dimension (dimension_algorithm_names()); empty: the simulation's.
  std::vector<std::string> dimension_algorithms;
};

Array psum(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
           const CollectiveOptions& options = {});
Array pmean(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
            const CollectiveOptions& options = {});
Array pmax(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
           const CollectiveOptions& options = {});
Array pmin(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
           const CollectiveOptions& options = {});
// Over every leaf of a tree (gradients, metrics) as one collective, as jax.lax binds psum once for all of a
// pytree's leaves: the leaves of each dtype are reduced as one flat buffer of at most 5e8 elements (one
// ring's latencies per buffer, not one per leaf; docs/collectives.md#pytrees).
Tree psum(const Tree& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
          const CollectiveOptions& options = {});
Tree pmean(const Tree& x, const AxisName& axis_name, const AxisIndexGroups& groups = {},
           const CollectiveOptions& options = {});

Array all_gather(const Array& x, const AxisName& axis_name, int axis = 0, bool tiled = false,
                 const AxisIndexGroups& groups = {}, const CollectiveOptions& options = {});
Array psum_scatter(const Array& x, const AxisName& axis_name, int scatter_dimension = 0, bool tiled = false,
                   const AxisIndexGroups& groups = {}, const CollectiveOptions& options = {});
// Over every leaf of a tree alike, as jax.lax does; each dtype's leaves move as one collective (up to 5e8
// elements), as XLA's all-gather and reduce-scatter combiners join the per-leaf ones (FSDP's flat parameters
// do the same).
Tree all_gather(const Tree& x, const AxisName& axis_name, int axis = 0, bool tiled = false,
                const AxisIndexGroups& groups = {}, const CollectiveOptions& options = {});
Tree psum_scatter(const Tree& x, const AxisName& axis_name, int scatter_dimension = 0, bool tiled = false,
                  const AxisIndexGroups& groups = {}, const CollectiveOptions& options = {});
// (source, destination) pairs; a device that is no destination gets zeros.
Array ppermute(const Array& x, const AxisName& axis_name, const std::vector<std::pair<int, int>>& perm);
// Device i receives the value of device perm[i].
Array pshuffle(const Array& x, const AxisName& axis_name, const std::vector<int>& perm);
Array all_to_all(const Array& x, const AxisName& axis_name, int split_axis, int concat_axis,
                 bool tiled = false, const AxisIndexGroups& groups = {},
                 const CollectiveOptions& options = {});
// This device's index along the axis (a tuple: its position over the named axes, the first major), an int32
// scalar.
Array axis_index(const AxisName& axis_name);

// spmdsim extensions, not JAX primitives (jax.lax has no rooted collectives): they run the broadcast and
// reduce algorithms of the registry over the whole axis, for sweeps and for testing those algorithms.
// broadcast: every device gets the value of the device at axis index `root` (x gives the shape elsewhere).
Array broadcast(const Array& x, const AxisName& axis_name, int root, const CollectiveOptions& options = {});
// reduce: the device at `root` gets the sum over the axis, as psum would give it; the others get zeros.
Array reduce(const Array& x, const AxisName& axis_name, int root, const CollectiveOptions& options = {});

}  // namespace spmdsim
