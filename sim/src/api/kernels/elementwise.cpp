// Elementwise kernels: binary ops with numpy broadcasting and JAX's type promotion, unary ops, conversions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::kernels {
namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, Eigen::bfloat16> || std::is_same_v<T, Eigen::half>;

// One element converted as XLA's convert does it.
template <class To, class From>
To convert_value(From v) {
  if constexpr (is_half_v<From>) {
    return convert_value<To>(static_cast<float>(v));
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, std::int32_t> && std::is_floating_point_v<From>) {
    // XLA saturates and maps NaN to 0, where a C++ cast is undefined.
    constexpr auto lowest = std::numeric_limits<std::int32_t>::min();
    constexpr auto highest = std::numeric_limits<std::int32_t>::max();
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(lowest)) return lowest;
    if (v >= static_cast<From>(highest)) return highest;
    return static_cast<std::int32_t>(v);
  } else {
    return static_cast<To>(v);
  }
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (std::size_t i = 1; i <= out.size(); ++i) {
    std::int64_t da = i <= a.size() ? a[a.size() - i] : 1;
    std::int64_t db = i <= b.size() ? b[b.size() - i] : 1;
    if (da != db && da != 1 && db != 1)
      throw ValueError(
          fmt::format("Incompatible shapes for broadcasting: shapes=[{}, {}]", shape_str(a), shape_str(b)));
    out[out.size() - i] = da == 1 ? db : da;
  }
  return out;
}

// An operand as the binary loop reads it: one value (an Eigen constant) or the whole output shape.
Array as_operand(const Array& x, const Shape& out_shape) {
  if (x.size() == 1 || x.shape() == out_shape) return x;
  return kernels::broadcast_to(x, out_shape).value;
}

// The one loop of every binary op: fn combines two Eigen expressions of the compute type.
template <class Fn>
KernelResult binary(const Array& a, const Array& b, DType dtype, Fn fn) {
  Shape out_shape = broadcast_shapes(a.shape(), b.shape());
  std::int64_t n = num_elements(out_shape);
  OpCost cost{static_cast<double>(n), static_cast<double>(a.nbytes() + b.nbytes()) + bytes_of(n, dtype)};
  if (any_abstract({&a, &b})) return {Array::abstract(out_shape, dtype), cost};

  DType compute = compute_dtype(dtype);
  Array x = as_operand(convert(a, compute), out_shape);
  Array y = as_operand(convert(b, compute), out_shape);
  Storage values = with_compute_values(x, [&](const auto& xv) {
    using T = typename std::decay_t<decltype(xv)>::Scalar;
    using V = Vector<T>;
    const auto yv = y.values<T>();
    // Same-shape and single-value operands: one vectorised Eigen expression, no index arithmetic.
    if (xv.size() == n && yv.size() == n) return V(fn(xv, yv));
    if (xv.size() != n) return V(fn(V::Constant(n, xv[0]), yv));
    return V(fn(xv, V::Constant(n, yv[0])));
  });
  return {convert(Array(std::move(out_shape), std::move(values)), dtype), cost};
}

template <class Fn>
KernelResult unary(const Array& a, DType dtype, Fn fn) {
  OpCost cost{static_cast<double>(a.size()), static_cast<double>(a.nbytes()) + bytes_of(a.size(), dtype)};
  if (a.is_abstract()) return {Array::abstract(a.shape(), dtype), cost};

  Array x = convert(a, compute_dtype(dtype));
  Storage values = with_compute_values(
      x, [&](const auto& xv) { return Vector<typename std::decay_t<decltype(xv)>::Scalar>(fn(xv)); });
  return {convert(Array(a.shape(), std::move(values)), dtype), cost};
}

}  // namespace

DType compute_dtype(DType dtype) {
  if (dtype == DType::bf16 || dtype == DType::f16) return DType::f32;
  if (dtype == DType::boolean) return DType::i32;
  return dtype;
}

DType inexact(DType dtype) {
  return is_floating(dtype) ? dtype : DType::f32;
}

DType int_if_bool(DType dtype) {
  return dtype == DType::boolean ? DType::i32 : dtype;
}

Array convert(const Array& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  Storage out = make_storage(dtype, a.size());
  a.visit_values([&out](const auto& from) {
    std::visit(
        [&from](auto& to) {
          using From = typename std::decay_t<decltype(from)>::Scalar;
          using To = typename std::decay_t<decltype(to)>::Scalar;
          to = from.unaryExpr([](From v) { return convert_value<To>(v); });
        },
        out);
  });
  return Array(a.shape(), std::move(out));
}

DType weak_scalar_dtype(double value, DType array_dtype) {
  if (is_floating(array_dtype)) return array_dtype;
  bool is_int32 = value == std::trunc(value) && value >= std::numeric_limits<std::int32_t>::min() &&
                  value <= std::numeric_limits<std::int32_t>::max();
  return is_int32 ? DType::i32 : DType::f32;
}

Array weak_scalar(double value, DType array_dtype) {
  return Array::scalar(value, weak_scalar_dtype(value, array_dtype));
}

KernelResult add(const Array& a, const Array& b) {
  return binary(a, b, promote_types(a.dtype(), b.dtype()),
                [](const auto& x, const auto& y) { return x + y; });
}

KernelResult subtract(const Array& a, const Array& b) {
  DType dtype = promote_types(a.dtype(), b.dtype());
  if (dtype == DType::boolean)
    throw TypeError(
        "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of "
        "integer, floating, complexfloating.");
  return binary(a, b, dtype, [](const auto& x, const auto& y) { return x - y; });
}

KernelResult multiply(const Array& a, const Array& b) {
  return binary(a, b, promote_types(a.dtype(), b.dtype()),
                [](const auto& x, const auto& y) { return x * y; });
}

KernelResult divide(const Array& a, const Array& b) {
  // True division: integer operands give float32, as in jnp.divide.
  return binary(a, b, inexact(promote_types(a.dtype(), b.dtype())),
                [](const auto& x, const auto& y) { return x / y; });
}

KernelResult maximum(const Array& a, const Array& b) {
  return binary(a, b, promote_types(a.dtype(), b.dtype()), [](const auto& x, const auto& y) {
    return x.binaryExpr(y, NanMaxOp<typename std::decay_t<decltype(x)>::Scalar>());
  });
}

KernelResult minimum(const Array& a, const Array& b) {
  return binary(a, b, promote_types(a.dtype(), b.dtype()), [](const auto& x, const auto& y) {
    return x.binaryExpr(y, NanMinOp<typename std::decay_t<decltype(x)>::Scalar>());
  });
}

KernelResult negative(const Array& a) {
  if (a.dtype() == DType::boolean)
    throw TypeError(
        "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
        "complexfloating.");
  return unary(a, a.dtype(), [](const auto& x) { return -x; });
}

KernelResult tanh(const Array& a) {
  return unary(a, inexact(a.dtype()), [](const auto& x) { return x.tanh(); });
}

KernelResult relu(const Array& a) {
  // jax.nn.relu is jnp.maximum(x, 0): NaN stays NaN.
  return unary(a, int_if_bool(a.dtype()), [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::Scalar;
    return x.binaryExpr(std::decay_t<decltype(x)>::Zero(x.size()), NanMaxOp<T>());
  });
}

KernelResult exp(const Array& a) {
  return unary(a, inexact(a.dtype()), [](const auto& x) { return x.exp(); });
}

KernelResult log(const Array& a) {
  return unary(a, inexact(a.dtype()), [](const auto& x) { return x.log(); });
}

KernelResult sqrt(const Array& a) {
  return unary(a, inexact(a.dtype()), [](const auto& x) { return x.sqrt(); });
}

KernelResult square(const Array& a) {
  return unary(a, int_if_bool(a.dtype()), [](const auto& x) { return x.square(); });
}

KernelResult abs(const Array& a) {
  return unary(a, a.dtype(), [](const auto& x) { return x.abs(); });
}

KernelResult astype(const Array& a, DType dtype) {
  OpCost cost{0, static_cast<double>(a.nbytes()) + bytes_of(a.size(), dtype)};
  if (a.is_abstract()) return {Array::abstract(a.shape(), dtype), cost};
  return {convert(a, dtype), cost};
}

}  // namespace spmdsim::kernels
