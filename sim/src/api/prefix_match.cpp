#include "api/prefix_match.hpp"

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::detail {
namespace {

template <class Leaf>
std::string kind(const PyTree<Leaf>& node) {
  using T = PyTree<Leaf>;
  if (node.is_none()) return "NoneType";
  if (node.is_leaf()) return "leaf";
  if (std::holds_alternative<typename T::Tuple>(node.node())) return "tuple";
  if (std::holds_alternative<typename T::List>(node.node())) return "list";
  return "dict";
}

template <class Leaf>
std::vector<std::string> child_keys(const PyTree<Leaf>& node) {
  std::vector<std::string> keys;
  if (auto* d = std::get_if<typename PyTree<Leaf>::Dict>(&node.node()))
    for (const auto& [k, v] : d->items) keys.push_back(k);
  else
    for (std::size_t i = 0; i < node.size(); ++i) keys.push_back(std::to_string(i));
  return keys;
}

std::string child_path(const std::string& path, const Tree& container, const std::string& key) {
  if (std::holds_alternative<Tree::Dict>(container.node())) return fmt::format("{}['{}']", path, key);
  return fmt::format("{}[{}]", path, key);
}

void collect(const Axes& prefix, const Tree& full, const std::string& name, const std::string& path,
             std::vector<AxisLeaf>& out) {
  if (prefix.is_leaf()) {
    // A leaf applies to every array below this point (None containers hold none).
    if (full.is_leaf()) {
      out.push_back({prefix.leaf(), path});
      return;
    }
    const auto keys = child_keys(full);
    const auto children = full.children();
    for (std::size_t i = 0; i < children.size(); ++i) collect(prefix, *children[i], name, child_path(path, full, keys[i]), out);
    return;
  }
  const std::string prefix_kind = kind(prefix);
  const std::string full_kind = kind(full);
  if (prefix_kind != full_kind)
    throw ValueError(fmt::format(
        "pytree structure error: different types at key path\n    {}{}\nAt that key path, the prefix pytree {} has "
        "a subtree of type\n    {}\nbut at the same key path the full pytree has a subtree of different type\n    {}.",
        name, path, name, python_type_name(prefix), python_type_name(full)));
  if (prefix_kind == "tuple" || prefix_kind == "list") {
    if (prefix.size() != full.size())
      throw ValueError(fmt::format(
          "pytree structure error: different lengths of {} at key path\n    {}{}\nAt that key path, the prefix "
          "pytree {} has a subtree of type {} of length {}, but the full pytree has a subtree of the same type but "
          "of length {}.",
          prefix_kind, name, path, name, prefix_kind, prefix.size(), full.size()));
  } else if (child_keys(prefix) != child_keys(full)) {
    throw ValueError(fmt::format(
        "pytree structure error: different pytree keys at key path\n    {}{}\nAt that key path, the prefix pytree {} "
        "has a subtree of type\n    <class 'dict'>\nwith child keys\n    {}\nbut at the same key path the full "
        "pytree has a subtree of the same type but with child keys\n    {}",
        name, path, name, fmt::join(child_keys(prefix), " "), fmt::join(child_keys(full), " ")));
  }
  const auto keys = child_keys(full);
  const auto prefix_children = prefix.children();
  const auto full_children = full.children();
  for (std::size_t i = 0; i < full_children.size(); ++i)
    collect(*prefix_children[i], *full_children[i], name, child_path(path, full, keys[i]), out);
}

}  // namespace

template <class Leaf>
std::string python_type_name(const PyTree<Leaf>& node) {
  const std::string k = kind(node);
  if (k == "leaf") return "<class 'jaxlib.xla_extension.ArrayImpl'>";
  return fmt::format("<class '{}'>", k);
}
template std::string python_type_name(const Tree&);
template std::string python_type_name(const Axes&);

std::vector<AxisLeaf> broadcast_prefix(const Axes& prefix, const Tree& full, const std::string& name,
                                       const std::string& root_path) {
  std::vector<AxisLeaf> out;
  collect(prefix, full, name, root_path, out);
  return out;
}

}  // namespace spmdsim::detail
