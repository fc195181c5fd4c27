// Reduction kernels: one skeleton views the input as (outer, n, inner) row-major blocks and reduces each
// block's n rows with an Eigen column-wise reduction.
#include <string_view>

#include <fmt/format.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::kernels {
namespace {

// reducer maps an (n x inner) block to its (1 x inner) reduction, in the compute type of dtype.
template <class Reducer>
KernelResult reduce(const Array& a, std::optional<int> axis, bool keepdims, DType dtype, Reducer reducer) {
  std::int64_t outer = 1;
  std::int64_t n = a.size();
  std::int64_t inner = 1;
  Shape out_shape;
  if (axis) {
    auto ax = static_cast<std::size_t>(normalize_axis(*axis, a.ndim()));
    const Shape& shape = a.shape();
    for (std::size_t d = 0; d < ax; ++d) outer *= shape[d];
    n = shape[ax];
    for (std::size_t d = ax + 1; d < shape.size(); ++d) inner *= shape[d];
    out_shape = shape;
    if (keepdims)
      out_shape[ax] = 1;
    else
      out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(ax));
  } else if (keepdims) {
    out_shape = Shape(a.shape().size(), 1);
  }
  OpCost cost{static_cast<double>(a.size()),
              static_cast<double>(a.nbytes()) + bytes_of(outer * inner, dtype)};
  if (a.is_abstract()) return {Array::abstract(out_shape, dtype), cost};

  Array x = convert(a, compute_dtype(dtype));
  Storage values = with_compute_values(x, [&](const auto& in) {
    using T = typename std::decay_t<decltype(in)>::Scalar;
    using V = Vector<T>;
    V out(outer * inner);
    Eigen::Map<RowMajorArray<T>> rows(out.data(), outer, inner);
    // An empty extent (n = 0) reads nothing, but Eigen still offsets the block's pointer for each column:
    // that pointer must be `inner` valid elements, not an empty input's null data.
    const V no_rows = n == 0 ? V::Zero(inner) : V();
    const T* data = n == 0 ? no_rows.data() : in.data();
    for (std::int64_t o = 0; o < outer; ++o)
      rows.row(o) = reducer(Eigen::Map<const RowMajorArray<T>>(data + o * n * inner, n, inner));
    return out;
  });
  return {convert(Array(std::move(out_shape), std::move(values)), dtype), cost};
}

// max and min have no identity: reducing an empty extent is an error, as in numpy.
void check_not_empty(const Array& a, std::optional<int> axis, std::string_view name) {
  std::int64_t n = axis ? a.shape()[static_cast<std::size_t>(normalize_axis(*axis, a.ndim()))] : a.size();
  if (n == 0)
    throw ValueError(fmt::format("zero-size array to reduction operation {} which has no identity", name));
}

}  // namespace

KernelResult sum(const Array& a, std::optional<int> axis, bool keepdims) {
  // jnp.sum of bool counts in int32; of bf16/f16 it accumulates in float32.
  return reduce(a, axis, keepdims, int_if_bool(a.dtype()),
                [](const auto& block) { return block.colwise().sum(); });
}

KernelResult mean(const Array& a, std::optional<int> axis, bool keepdims) {
  return reduce(a, axis, keepdims, inexact(a.dtype()), [](const auto& block) {
    using T = typename std::decay_t<decltype(block)>::Scalar;
    return block.colwise().sum() / static_cast<T>(block.rows());
  });
}

KernelResult max(const Array& a, std::optional<int> axis, bool keepdims) {
  check_not_empty(a, axis, "max");
  return reduce(a, axis, keepdims, a.dtype(), [](const auto& block) {
    return block.colwise().redux(NanMaxOp<typename std::decay_t<decltype(block)>::Scalar>());
  });
}

KernelResult min(const Array& a, std::optional<int> axis, bool keepdims) {
  check_not_empty(a, axis, "min");
  return reduce(a, axis, keepdims, a.dtype(), [](const auto& block) {
    return block.colwise().redux(NanMinOp<typename std::decay_t<decltype(block)>::Scalar>());
  });
}

}  // namespace spmdsim::kernels
