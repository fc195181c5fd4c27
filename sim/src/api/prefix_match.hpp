// JAX's tree-prefix rule for in_axes / out_axes: an axis leaf applies to every array below it; a container
// must match the value's container, or the error names the key path where they part, in JAX's words.
#pragma once

#include <string>
#include <vector>

#include "spmdsim/pytree.hpp"

namespace spmdsim::detail {

struct AxisLeaf {
  Axis axis;
  std::string path;  // JAX key path of the array, e.g. "[0]['w']"
};

// One entry per leaf of `full`, in flattening order. `name` is what messages call the prefix
// ("pmap in_axes"), `root_path` the key path of `full` itself.
std::vector<AxisLeaf> broadcast_prefix(const Axes& prefix, const Tree& full, const std::string& name,
                                       const std::string& root_path);

// Python's repr of the type of a tree node, as JAX prints it in structure errors.
template <class Leaf>
std::string python_type_name(const PyTree<Leaf>& node);

}  // namespace spmdsim::detail
