// PyTree structure and JAX's prefix rule for in_axes / out_axes.
#include <gtest/gtest.h>

#include "api/prefix_match.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {
namespace {

Tree mlp_params() {
  auto layer = [] { return Tree::dict({{"w", Array::zeros({3, 2})}, {"b", Array::zeros({2})}}); };
  return Tree::list({layer(), layer()});
}

TEST(PyTree, FlattensDictsInKeyOrderAndSkipsNone) {
  Tree t = Tree::tuple({Tree::dict({{"w", Array::zeros({1})}, {"b", Array::zeros({2})}}), Tree(none),
                        Array::zeros({3})});
  auto leaves = t.leaves();
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[0].shape(), Shape{2});  // 'b' before 'w'
  EXPECT_EQ(leaves[1].shape(), Shape{1});
  EXPECT_EQ(t.treedef(), "PyTreeDef(({'b': *, 'w': *}, None, *))");
  EXPECT_EQ(Tree::tuple({Array::zeros({1})}).structure(), "(*,)");
}

TEST(PyTree, MapKeepsStructure) {
  Tree t = mlp_params();
  Tree doubled = t.map([](const Array& a) { return Array::zeros({a.size() * 2}); });
  EXPECT_EQ(doubled.structure(), t.structure());
  EXPECT_EQ(doubled[0]["w"].leaf().shape(), Shape{12});
}

TEST(PrefixMatch, ALeafAppliesToEveryArrayBelowIt) {
  auto axes = detail::broadcast_prefix(Axes::tuple({none, 0}), Tree::tuple({mlp_params(), Array::zeros({4, 2})}),
                                       "pmap in_axes", "[0]");
  ASSERT_EQ(axes.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(axes[static_cast<std::size_t>(i)].axis.has_value());
  EXPECT_EQ(axes[4].axis, 0);
  EXPECT_EQ(axes[0].path, "[0][0][0]['b']");
  EXPECT_EQ(axes[4].path, "[0][1]");
}

TEST(PrefixMatch, DictPrefixPerKey) {
  Tree layer = Tree::dict({{"w", Array::zeros({4, 3})}, {"b", Array::zeros({4})}});
  auto axes = detail::broadcast_prefix(Axes::tuple({Axes::dict({{"w", 0}, {"b", none}})}), Tree::tuple({layer}),
                                       "pmap in_axes", "[0]");
  EXPECT_FALSE(axes[0].axis.has_value());  // b
  EXPECT_EQ(axes[1].axis, 0);             // w
}

TEST(PrefixMatch, DifferentTypesNameTheKeyPath) {
  try {
    detail::broadcast_prefix(Axes::tuple({Axes::dict({{"w", 0}})}), Tree::tuple({mlp_params()}), "pmap in_axes",
                             "[0]");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "pytree structure error: different types at key path\n    pmap in_axes[0][0]\nAt that key path, the "
                 "prefix pytree pmap in_axes has a subtree of type\n    <class 'dict'>\nbut at the same key path the "
                 "full pytree has a subtree of different type\n    <class 'list'>.");
  }
}

TEST(PrefixMatch, DifferentDictKeys) {
  Tree layer = Tree::dict({{"w", Array::zeros({4, 3})}, {"b", Array::zeros({4})}});
  EXPECT_THROW(detail::broadcast_prefix(Axes::dict({{"w", 0}, {"c", 0}}), layer, "pmap in_axes", ""), ValueError);
}

}  // namespace
}  // namespace spmdsim
