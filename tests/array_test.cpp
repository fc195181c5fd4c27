// Array's storage model: views share another array's elements, deferred arrays make theirs on first read,
// and pmap uses both (shards along a leading axis are views of the host input; split results are stacked
// only when the host reads them).
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

// 0, 1, ..., n - 1 in float32, with `shape`.
Array iota(const Shape& shape) { return Array::arange(num_elements(shape), DType::f32).reshaped(shape); }

TEST(ArrayView, SharesTheBaseElements) {
  const Array base = iota({3, 4});
  const Array row = Array::view(base, 4, {4});
  EXPECT_EQ(row.to_doubles(), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(row.values<float>().data(), base.values<float>().data() + 4);
  EXPECT_EQ(row.allocation(), nullptr);
}

TEST(ArrayView, OfAViewAddsOffsets) {
  const Array base = iota({12});
  const Array inner = Array::view(Array::view(base, 3, {2, 4}), 5, {3});
  EXPECT_EQ(inner.to_doubles(), (std::vector<double>{8, 9, 10}));
  EXPECT_EQ(inner.to_string(), "[ 8.  9. 10.]");
  EXPECT_EQ(inner.item(2), 10.0);
}

TEST(ArrayView, FeedsKernelsAsAnyArray) {
  const Array base = Array::from_values({2, 3}, {1, 2, 3, 10, 20, 30});
  const Array first = Array::view(base, 0, {3});
  const Array second = Array::view(base, 3, {3});
  EXPECT_EQ((first + second).to_doubles(), (std::vector<double>{11, 22, 33}));
  EXPECT_EQ(astype(second, DType::i32).to_doubles(), (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(matmul(first.reshaped({1, 3}), second.reshaped({3, 1})).to_doubles(),
            (std::vector<double>{140}));
  EXPECT_EQ(sum(second).item(0), 60.0);
}

TEST(ArrayView, OutOfRangeThrows) {
  const Array base = iota({6});
  EXPECT_THROW(Array::view(base, 4, {3}), std::out_of_range);
  EXPECT_THROW(Array::view(base, -1, {1}), std::out_of_range);
  EXPECT_NO_THROW(Array::view(base, 6, {0}));
}

TEST(ArrayView, OfAnAbstractArrayIsAbstract) {
  const Array view = Array::view(Array::abstract({4, 8}, DType::bf16), 8, {2, 4});
  EXPECT_TRUE(view.is_abstract());
  EXPECT_EQ(view.shape(), (Shape{2, 4}));
  EXPECT_EQ(view.dtype(), DType::bf16);
}

TEST(ArrayView, ContiguousLayoutOpsShareStorageAndStridedOnesCopy) {
  const Array a = iota({3, 4});
  const auto row = kernels::take(a, 0, 2).value;
  EXPECT_EQ(row.values<float>().data(), a.values<float>().data() + 8);
  EXPECT_EQ(row.to_doubles(), (std::vector<double>{8, 9, 10, 11}));
  const auto column = kernels::take(a, 1, 2).value;
  EXPECT_EQ(column.to_doubles(), (std::vector<double>{2, 6, 10}));
  EXPECT_NE(column.values<float>().data(), a.values<float>().data() + 2);
  const auto rows = slice(a, 0, 1, 3);
  EXPECT_EQ(rows.values<float>().data(), a.values<float>().data() + 4);
  // A transpose with a unit axis reads the elements in order: also a view.
  const Array line = iota({1, 5});
  EXPECT_EQ(transpose(line).values<float>().data(), line.values<float>().data());
  EXPECT_EQ(transpose(a).to_doubles(), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(ArrayDeferred, MakesItsValuesOnFirstReadOnce) {
  int made = 0;
  const Array deferred = Array::deferred({2, 2}, DType::f32, [&made] {
    ++made;
    return Array::from_values({2, 2}, {1, 2, 3, 4});
  });
  EXPECT_EQ(made, 0);
  EXPECT_FALSE(deferred.is_abstract());
  EXPECT_EQ(deferred.nbytes(), 16u);
  const Array copy = deferred;
  const Array second_row = Array::view(deferred, 2, {2});
  EXPECT_EQ(made, 0);
  EXPECT_EQ(second_row.to_doubles(), (std::vector<double>{3, 4}));
  EXPECT_EQ(made, 1);
  EXPECT_EQ(copy.to_string(), "[[1. 2.]\n [3. 4.]]");
  EXPECT_EQ(deferred.values<float>().data() + 2, second_row.values<float>().data());
  EXPECT_EQ(made, 1);
}

TEST(ArrayDeferred, MadeAsAViewKeepsTheViewsOffset) {
  const Array base = iota({10});
  const Array deferred = Array::deferred({3}, DType::f32, [base] { return Array::view(base, 6, {3}); });
  EXPECT_EQ(deferred.to_doubles(), (std::vector<double>{6, 7, 8}));
  EXPECT_EQ(deferred.values<float>().data(), base.values<float>().data() + 6);
}

TEST(ArrayDeferred, MadeWithTheWrongShapeOrDtypeThrows) {
  const Array wrong_shape = Array::deferred({3}, DType::f32, [] { return iota({4}); });
  EXPECT_THROW(wrong_shape.to_doubles(), std::logic_error);
  EXPECT_THROW(wrong_shape.to_doubles(), std::logic_error);  // tried again, not stuck
  const Array wrong_dtype = Array::deferred({4}, DType::i32, [] { return iota({4}); });
  try {
    wrong_dtype.to_doubles();
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "deferred values of int32(4,) were made as float32(4,)");
  }
}

TEST(PmapStorage, ShardsAlongTheLeadingAxisAreViewsOfTheHostInput) {
  Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(4)));
  const Array x = iota({4, 3});
  const float* host = x.values<float>().data();
  std::vector<const float*> seen(4, nullptr);
  auto record = pmap(
      [&seen](const Args& a) -> Tree {
        seen[static_cast<std::size_t>(axis_index("i").item(0))] = a[0].array().values<float>().data();
        return a[0].array();
      },
      {.axis_name = "i"});
  (void)record(sim, {x});
  for (std::size_t rank = 0; rank < 4; ++rank) EXPECT_EQ(seen[rank], host + 3 * rank) << "device " << rank;
}

TEST(PmapStorage, SplitResultsAreReadableAfterTheSimulationEnds) {
  Tree out;
  {
    Simulation sim(topologies::switch_cluster(testing::round_numbers_cluster(3)));
    auto scale = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i") * 2.0; },
                      {.out_axes = 1, .axis_name = "i"});
    out = scale(sim, {iota({3, 2})});
  }
  // Columns are the devices' results: 2 * (0 + 2 + 4) and 2 * (1 + 3 + 5), on every device.
  EXPECT_EQ(out.leaf().shape(), (Shape{2, 3}));
  EXPECT_EQ(out.leaf().to_doubles(), (std::vector<double>{12, 12, 12, 18, 18, 18}));
}

}  // namespace
}  // namespace spmdsim
