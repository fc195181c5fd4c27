// PyTree: JAX's nested containers (None, leaf, tuple, list, dict with sorted string keys), generic in the
// leaf. Tree (leaves are arrays) carries pmap's arguments and results; Axes (leaves are an optional axis)
// carries in_axes and out_axes. Immutable, so copies share their nodes: a model's params are hundreds of
// leaves that every device passes around (a unit of them, a tree of gradients) many times a step.
#pragma once

#include <functional>
#include <type_traits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/container/flat_map.hpp>

#include "spmdsim/array.hpp"

namespace spmdsim {

struct NoneType {
  bool operator==(const NoneType&) const = default;
};
inline constexpr NoneType none{};

template <class Leaf>
class PyTree {
 public:
  struct Tuple {
    std::vector<PyTree> items;
  };
  struct List {
    std::vector<PyTree> items;
  };
  struct Dict {
    // Sorted keys in one array: a tree is made and dropped many times a step on every device, and a node per
    // key was most of what that cost.
    boost::container::flat_map<std::string, PyTree> items;
  };
  using Node = std::variant<NoneType, Leaf, Tuple, List, Dict>;

  PyTree() : node_(none_node()) {}
  // Copies only: a moved-from tree would hold no node, and a copy costs a reference count.
  PyTree(const PyTree&) = default;
  PyTree& operator=(const PyTree&) = default;
  // In an axis spec (optional leaves) None is a leaf meaning "no axis", as JAX reads in_axes/out_axes.
  PyTree(NoneType) : node_(std::make_shared<const Node>(make_none())) {}
  template <class T>
    requires(std::is_constructible_v<Leaf, T> && !std::is_same_v<std::decay_t<T>, PyTree> &&
             !std::is_same_v<std::decay_t<T>, NoneType>)
  PyTree(T&& leaf) : node_(std::make_shared<const Node>(Leaf(std::forward<T>(leaf)))) {}
  PyTree(Tuple t) : node_(std::make_shared<const Node>(std::move(t))) {}
  PyTree(List l) : node_(std::make_shared<const Node>(std::move(l))) {}
  PyTree(Dict d) : node_(std::make_shared<const Node>(std::move(d))) {}

  static PyTree tuple(std::vector<PyTree> items) { return PyTree(Tuple{std::move(items)}); }
  static PyTree list(std::vector<PyTree> items) { return PyTree(List{std::move(items)}); }
  static PyTree dict(const std::map<std::string, PyTree>& items) {
    Dict d;
    d.items.insert(boost::container::ordered_unique_range, items.begin(), items.end());
    return PyTree(std::move(d));
  }

  const Node& node() const { return *node_; }
  bool is_none() const { return std::holds_alternative<NoneType>(*node_); }
  bool is_leaf() const { return std::holds_alternative<Leaf>(*node_); }
  const Leaf& leaf() const { return std::get<Leaf>(*node_); }

  // Children of a container in JAX's flattening order (dict keys sorted); empty for None and leaves.
  std::vector<const PyTree*> children() const {
    std::vector<const PyTree*> out;
    for_each_child([&](const PyTree& c) { out.push_back(&c); });
    return out;
  }
  // Element i of a tuple or list; key of a dict.
  const PyTree& operator[](std::size_t i) const {
    if (auto* t = std::get_if<Tuple>(node_.get())) return t->items.at(i);
    return std::get<List>(*node_).items.at(i);
  }
  const PyTree& operator[](const std::string& key) const { return std::get<Dict>(*node_).items.at(key); }
  std::size_t size() const {
    std::size_t count = 0;
    for_each_child([&](const PyTree&) { ++count; });
    return count;
  }

  // Leaves in flattening order (None holds no leaf, as in JAX).
  std::vector<Leaf> leaves() const {
    std::vector<Leaf> out;
    for_each_leaf([&](const Leaf& leaf) { out.push_back(leaf); });
    return out;
  }
  // fn(leaf) for every leaf in flattening order, without building anything.
  template <class Fn>
  void for_each_leaf(Fn&& fn) const {
    if (auto* leaf = std::get_if<Leaf>(node_.get())) fn(*leaf);
    for_each_child([&](const PyTree& c) { c.for_each_leaf(fn); });
  }

  // Same containers, leaves replaced in flattening order by fn(leaf).
  template <class Fn>
  auto map(Fn&& fn) const -> PyTree<std::invoke_result_t<Fn, const Leaf&>> {
    using Out = PyTree<std::invoke_result_t<Fn, const Leaf&>>;
    return std::visit(
        [&](const auto& n) -> Out {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, NoneType>) return Out();
          else if constexpr (std::is_same_v<N, Leaf>) return Out(fn(n));
          else if constexpr (std::is_same_v<N, Dict>) {
            typename Out::Dict d;
            d.items.reserve(n.items.size());
            for (auto& [k, c] : n.items) d.items.emplace_hint(d.items.end(), k, c.map(fn));
            return Out(std::move(d));
          } else {
            std::vector<Out> items;
            for (auto& c : n.items) items.push_back(c.map(fn));
            if constexpr (std::is_same_v<N, Tuple>) return Out::tuple(std::move(items));
            else return Out::list(std::move(items));
          }
        },
        *node_);
  }

  // Same containers with the given leaves (count must match, in flattening order).
  template <class NewLeaf>
  PyTree<NewLeaf> rebuild(const std::vector<NewLeaf>& new_leaves) const {
    std::size_t next = 0;
    auto out = map([&](const Leaf&) { return new_leaves.at(next++); });
    return out;
  }

  // JAX's structure text with leaves as '*': "PyTreeDef((*, {'b': *, 'w': *}))".
  std::string treedef() const { return "PyTreeDef(" + structure() + ")"; }
  // The structure without the PyTreeDef wrapper.
  std::string structure() const {
    return std::visit(
        [&](const auto& n) -> std::string {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, NoneType>) return "None";
          else if constexpr (std::is_same_v<N, Leaf>) return "*";
          else if constexpr (std::is_same_v<N, Dict>) {
            std::string s = "{";
            bool first = true;
            for (auto& [k, c] : n.items) {
              s += (first ? "'" : ", '") + k + "': " + c.structure();
              first = false;
            }
            return s + "}";
          } else {
            std::string s;
            for (std::size_t i = 0; i < n.items.size(); ++i) s += (i ? ", " : "") + n.items[i].structure();
            if constexpr (std::is_same_v<N, Tuple>) return "(" + s + (n.items.size() == 1 ? ",)" : ")");
            else return "[" + s + "]";
          }
        },
        *node_);
  }

  // Same container kinds, sizes and keys (leaves and None count as themselves).
  template <class Other>
  bool same_structure(const PyTree<Other>& other) const {
    return structure() == other.structure();
  }

 private:
  static const std::shared_ptr<const Node>& none_node() {
    static const auto node = std::make_shared<const Node>(NoneType{});
    return node;
  }
  static Node make_none() {
    if constexpr (std::is_constructible_v<Leaf, std::nullopt_t>) return Leaf(std::nullopt);
    else return NoneType{};
  }
  template <class Fn>
  void for_each_child(Fn&& fn) const {
    if (auto* t = std::get_if<Tuple>(node_.get()))
      for (auto& c : t->items) fn(c);
    if (auto* l = std::get_if<List>(node_.get()))
      for (auto& c : l->items) fn(c);
    if (auto* d = std::get_if<Dict>(node_.get()))
      for (auto& [k, c] : d->items) fn(c);
  }
  std::shared_ptr<const Node> node_;
};

using Tree = PyTree<Array>;

// An in_axes / out_axes leaf: an axis index, or none (replicated / unmapped).
using Axis = std::optional<int>;
using Axes = PyTree<Axis>;

}  // namespace spmdsim
