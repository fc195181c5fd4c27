// Matrix products through Eigen's GEMM on row-major maps of the operands.
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::kernels {

KernelResult matmul(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError(fmt::format("matmul input operand {} must have ndim at least 1, but it has ndim 0",
                                 a.ndim() == 0 ? 0 : 1));
  if (a.ndim() > 3 || b.ndim() > 3)
    throw ValueError(fmt::format("spmdsim's matmul supports operands of at most 3 dimensions, got {} and {}",
                                 shape_str(a.shape()), shape_str(b.shape())));

  // As in numpy, a 1-d left operand is a row vector and a 1-d right operand a column vector, and the result
  // drops that dimension; a 3-d operand is a batch of matrices, and a batch of 1 (or none) broadcasts.
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  std::int64_t m = a.ndim() >= 2 ? sa[sa.size() - 2] : 1;
  std::int64_t k = sa.back();
  std::int64_t kb = b.ndim() >= 2 ? sb[sb.size() - 2] : sb[0];
  std::int64_t n = b.ndim() >= 2 ? sb.back() : 1;
  std::int64_t batch_a = a.ndim() == 3 ? sa[0] : 1;
  std::int64_t batch_b = b.ndim() == 3 ? sb[0] : 1;
  if (batch_a != batch_b && batch_a != 1 && batch_b != 1)
    throw ValueError(
        fmt::format("Incompatible shapes for matmul arguments: {} and {}", shape_str(sa), shape_str(sb)));
  if (k != kb)
    throw TypeError(fmt::format(
        "dot_general requires contracting dimensions to have the same shape, got ({},) and ({},).", k, kb));

  std::int64_t batch = std::max(batch_a, batch_b);
  Shape out_shape;
  if (a.ndim() == 3 || b.ndim() == 3) out_shape.push_back(batch);
  if (a.ndim() >= 2) out_shape.push_back(m);
  if (b.ndim() >= 2) out_shape.push_back(n);
  DType dtype = promote_types(a.dtype(), b.dtype());
  OpCost cost{.flops = 2.0 * static_cast<double>(batch * m * n * k),
              .bytes = static_cast<double>(a.nbytes() + b.nbytes()) + bytes_of(batch * m * n, dtype),
              .matmul = MatmulShape{batch, m, n, k}};
  if (any_abstract({&a, &b})) return {Array::abstract(out_shape, dtype), cost};

  DType compute = compute_dtype(dtype);
  Array x = convert(a, compute);
  Array y = convert(b, compute);
  Storage values = with_compute_values(x, [&](const auto& xv) {
    using T = typename std::decay_t<decltype(xv)>::Scalar;
    using V = Vector<T>;
    const auto yv = y.values<T>();
    std::int64_t step_a = batch_a == 1 ? 0 : m * k;
    std::int64_t step_b = batch_b == 1 ? 0 : k * n;
    V out(batch * m * n);
    for (std::int64_t i = 0; i < batch; ++i)
      Eigen::Map<RowMajorMatrix<T>>(out.data() + i * m * n, m, n).noalias() =
          Eigen::Map<const RowMajorMatrix<T>>(xv.data() + i * step_a, m, k) *
          Eigen::Map<const RowMajorMatrix<T>>(yv.data() + i * step_b, k, n);
    return out;
  });
  return {convert(Array(std::move(out_shape), std::move(values)), dtype), cost};
}

KernelResult matmul(const Array& a, const Array& b, MatmulTranspose transpose) {
  const auto swapped = [](const Array& x) {
    if (x.ndim() < 2) return x;
    std::vector<int> axes(static_cast<std::size_t>(x.ndim()));
    std::iota(axes.begin(), axes.end(), 0);
    std::swap(axes[axes.size() - 2], axes.back());
    return kernels::transpose(x, axes).value;
  };
  return kernels::matmul(transpose.a ? swapped(a) : a, transpose.b ? swapped(b) : b);
}

KernelResult dot(const Array& a, const Array& b) {
  // jnp.dot with a 0-d operand is a plain product.
  if (a.ndim() == 0 || b.ndim() == 0) return kernels::multiply(a, b);
  // jnp.dot on 3-d operands contracts differently from matmul (its result has both batch axes).
  if (a.ndim() > 2 || b.ndim() > 2)
    throw ValueError(fmt::format(
        "spmdsim's dot supports operands of at most 2 dimensions, got {} and {}; use matmul for batches",
        shape_str(a.shape()), shape_str(b.shape())));
  return kernels::matmul(a, b);
}

}  // namespace spmdsim::kernels
