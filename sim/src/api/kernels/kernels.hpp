// The device ops as pure functions: each computes its value in Eigen (nothing for abstract inputs) and its
// roofline cost, which is the same for abstract and real inputs. ops.cpp charges the cost to the device.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "spmdsim/array.hpp"
#include "spmdsim/dtype.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::kernels {

struct KernelResult {
  Array value;
  OpCost cost;
};

// elementwise.cpp
KernelResult add(const Array& a, const Array& b);
KernelResult subtract(const Array& a, const Array& b);
KernelResult multiply(const Array& a, const Array& b);
KernelResult divide(const Array& a, const Array& b);
KernelResult maximum(const Array& a, const Array& b);
KernelResult minimum(const Array& a, const Array& b);
KernelResult negative(const Array& a);
KernelResult tanh(const Array& a);
KernelResult relu(const Array& a);
KernelResult exp(const Array& a);
KernelResult log(const Array& a);
KernelResult sqrt(const Array& a);
KernelResult square(const Array& a);
KernelResult abs(const Array& a);
KernelResult astype(const Array& a, DType dtype);
// The dtype of a C++ scalar as JAX types a Python scalar next to an array of `array_dtype`: a floating
// array's dtype; next to an int32 or bool array an int32 if it is a whole number that fits (a Python int),
// and a float32 otherwise (a Python float).
DType weak_scalar_dtype(double value, DType array_dtype);
// That scalar, with its value.
Array weak_scalar(double value, DType array_dtype);
// a's values in dtype, with XLA's conversions (float to int saturates, NaN gives 0); not an op, no cost.
Array convert(const Array& a, DType dtype);
// The type ops compute in: float32 for bf16/f16 (rounding once into the result, as XLA CPU does), int32 for
// bool, the dtype itself otherwise.
DType compute_dtype(DType dtype);
// The result type of ops that are inexact (true division, tanh, mean, ...): JAX's default float32 for int32
// and bool.
DType inexact(DType dtype);
// The result type of ops that JAX computes in integers for bool (sum, square, relu).
DType int_if_bool(DType dtype);

// linalg.cpp
KernelResult matmul(const Array& a, const Array& b);
// The product of the operands `transpose` names transposed; the cost reads them as they are (the same bytes).
KernelResult matmul(const Array& a, const Array& b, MatmulTranspose transpose);
KernelResult dot(const Array& a, const Array& b);

// reduction.cpp
KernelResult sum(const Array& a, std::optional<int> axis, bool keepdims);
KernelResult mean(const Array& a, std::optional<int> axis, bool keepdims);
KernelResult max(const Array& a, std::optional<int> axis, bool keepdims);
KernelResult min(const Array& a, std::optional<int> axis, bool keepdims);

// layout.cpp
// The shape reshape produces, with its -1 resolved; throws JAX's TypeError for a bad one. Reshape itself is
// free (Array::reshaped), so it has no kernel.
Shape reshape_shape(const Shape& shape, const Shape& requested);
KernelResult transpose(const Array& a, const std::vector<int>& axes);
KernelResult slice(const Array& a, int axis, std::int64_t start, std::int64_t stop);
KernelResult take(const Array& a, int axis, std::int64_t index);
KernelResult concatenate(const std::vector<Array>& arrays, int axis);
KernelResult stack(const std::vector<Array>& arrays, int axis);
KernelResult broadcast_to(const Array& a, const Shape& shape);
// axis in [-ndim, ndim) as an index in [0, ndim); throws numpy's AxisError message as a ValueError.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t ndim);

// Helpers shared by the kernel files.

template <class T>
using RowMajorArray = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Bytes of n elements of dtype.
inline double bytes_of(std::int64_t n, DType dtype) {
  return static_cast<double>(n) * static_cast<double>(itemsize(dtype));
}

inline bool any_abstract(std::initializer_list<const Array*> arrays) {
  for (const Array* a : arrays)
    if (a->is_abstract()) return true;
  return false;
}

// jnp.maximum, jnp.max and relu propagate NaN; Eigen 3.4's public max()/maxCoeff() do not, its functors can.
template <class T>
using NanMaxOp = Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>;
template <class T>
using NanMinOp = Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>;

// Calls fn(values) on x's values (an Eigen::Map), which are of a compute type (see compute_dtype); fn returns
// a Vector of the same type.
template <class Fn>
Storage with_compute_values(const Array& x, Fn&& fn) {
  return x.visit_values([&](const auto& values) -> Storage {
    using T = typename std::decay_t<decltype(values)>::Scalar;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>)
      return fn(values);
    else
      throw std::logic_error("kernels compute in float32, float64 or int32 only");
  });
}

}  // namespace spmdsim::kernels
