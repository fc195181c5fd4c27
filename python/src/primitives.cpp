// The rules: each JAX primitive spmdsim runs, as spmdsim's own op or collective where it has one (so its cost
// is the C++ API's), else computed here element by element in double precision, rounded to JAX's result
// type and charged through custom_op with its FLOPs and bytes. Shapes and dtypes come from the jaxpr. The
// table at the end names every rule, those of control flow, indexing, sorting and windowed ops (their own
// files) too.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "control_flow.hpp"
#include "indexing.hpp"
#include "program.hpp"
#include "rule_support.hpp"
#include "sorting.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "windowed.hpp"

namespace spmdsim::python {
namespace {

// `a`'s values laid out in `shape`, which it broadcasts to: of one element (JAX's literals and scalars), or
// of the same rank with size-1 dimensions where `shape` is larger (as lax.eq compares the (n, 1) labels with
// the (1, k) iota in jax.nn.one_hot).
std::vector<double> broadcast_values(const Array& a, const Shape& shape) {
  auto values = a.to_doubles();
  if (a.shape() == shape || values.size() == 1) return values;
  const auto strides = strides_of(a.shape());
  std::vector<double> out(static_cast<std::size_t>(num_elements(shape)));
  for (std::int64_t e = 0; e < num_elements(shape); ++e) {
    const auto index = index_of(e, shape);
    std::int64_t from = 0;
    for (std::size_t d = 0; d < index.size(); ++d) from += (a.shape()[d] == 1 ? 0 : index[d]) * strides[d];
    out[static_cast<std::size_t>(e)] = values[static_cast<std::size_t>(from)];
  }
  return out;
}

// Elementwise over inputs that broadcast to the output's shape (broadcast_values).
template <class F>
Arrays elementwise(const Arrays& in, const Instruction& ins, double flops_per_element, F f) {
  const std::int64_t n = num_elements(ins.out_shapes[0]);
  return {charged(ins, in, flops_per_element * static_cast<double>(n), [&] {
    std::vector<std::vector<double>> args;
    for (const auto& a : in) args.push_back(broadcast_values(a, ins.out_shapes[0]));
    std::vector<double> out(static_cast<std::size_t>(n));
    std::vector<double> x(args.size());
    for (std::int64_t e = 0; e < n; ++e) {
      for (std::size_t k = 0; k < args.size(); ++k) x[k] = args[k].size() == 1 ? args[k][0] : args[k][e];
      out[static_cast<std::size_t>(e)] = f(x.data());
    }
    return out;
  })};
}

bool is_integer(const Instruction& ins) {
  return !is_floating(ins.out_dtypes[0]);
}
bool is_bool(DType dtype) {
  return dtype == DType::boolean;
}

int axis_int(std::int64_t axis) {
  return static_cast<int>(axis);
}

AxisIndexGroups groups_of(const Instruction& ins) {
  AxisIndexGroups groups;
  for (const auto& g : ins.groups) groups.emplace_back(g.begin(), g.end());
  return groups;
}

// ---- Elementwise ops spmdsim has --------------------------------------------------------------------------

template <Array (*Op)(const Array&, const Array&)>
Arrays binary(const Arrays& in, const Instruction&) {
  return {Op(in[0], in[1])};
}
template <Array (*Op)(const Array&)>
Arrays unary(const Arrays& in, const Instruction&) {
  return {Op(in[0])};
}

Arrays div_rule(const Arrays& in, const Instruction& ins) {
  if (!is_integer(ins)) return {divide(in[0], in[1])};
  // XLA's integer division rounds toward zero.
  return elementwise(in, ins, 1, [](const double* x) { return x[1] == 0 ? -1.0 : std::trunc(x[0] / x[1]); });
}

Arrays rem_rule(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 1, [](const double* x) { return std::fmod(x[0], x[1]); });
}

Arrays identity(const Arrays& in, const Instruction&) {
  return {in[0]};
}
Arrays identity_all(const Arrays& in, const Instruction&) {
  return in;
}

Arrays convert_element_type(const Arrays& in, const Instruction& ins) {
  if (in[0].dtype() == ins.out_dtypes[0]) return {in[0]};
  return {astype(in[0], ins.out_dtypes[0])};
}

// ---- Elementwise ops computed here
// -------------------------------------------------------------------------

template <double (*F)(double), int Flops>
Arrays unary_math(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, Flops, [](const double* x) { return F(x[0]); });
}
double logistic(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
double sign(double x) {
  return static_cast<double>((x > 0) - (x < 0));
}
double is_finite(double x) {
  return std::isfinite(x) ? 1.0 : 0.0;
}
double exp2(double x) {
  return std::exp2(x);
}
double log1p(double x) {
  return std::log1p(x);
}
double expm1(double x) {
  return std::expm1(x);
}
double sin(double x) {
  return std::sin(x);
}
double cos(double x) {
  return std::cos(x);
}
double tan(double x) {
  return std::tan(x);
}
double erf(double x) {
  return std::erf(x);
}
// Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011), the
// one XLA uses, refined by two Newton steps on std::erf to double precision.
double erf_inv(double y) {
  if (std::abs(y) >= 1)
    return std::abs(y) == 1 ? std::copysign(std::numeric_limits<double>::infinity(), y)
                            : std::numeric_limits<double>::quiet_NaN();
  double w = -std::log((1 - y) * (1 + y));
  double p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * y;
  for (int step = 0; step < 2; ++step)
    x -= (std::erf(x) - y) / (2 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}
double floor(double x) {
  return std::floor(x);
}
double ceil(double x) {
  return std::ceil(x);
}
double cbrt(double x) {
  return std::cbrt(x);
}

Arrays round_rule(const Arrays& in, const Instruction& ins) {
  // rounding_method 0: half away from zero; 1: half to even.
  if (ins.ints.empty() || ins.ints[0] == 0)
    return elementwise(in, ins, 1, [](const double* x) { return std::round(x[0]); });
  return elementwise(in, ins, 1, [](const double* x) { return std::nearbyint(x[0]); });
}

Arrays integer_pow(const Arrays& in, const Instruction& ins) {
  const auto y = ins.ints.at(0);
  if (y == 2) return {square(in[0])};
  return elementwise(in, ins, static_cast<double>(std::max<std::int64_t>(1, std::abs(y) - 1)),
                     [y](const double* x) { return std::pow(x[0], static_cast<double>(y)); });
}

Arrays pow_rule(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 1, [](const double* x) { return std::pow(x[0], x[1]); });
}
Arrays atan2_rule(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 1, [](const double* x) { return std::atan2(x[0], x[1]); });
}

template <class Compare>
Arrays comparison(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 1, [](const double* x) { return Compare{}(x[0], x[1]) ? 1.0 : 0.0; });
}

// Logical on bool, bitwise on integers.
Arrays not_rule(const Arrays& in, const Instruction& ins) {
  if (is_bool(ins.out_dtypes[0]))
    return elementwise(in, ins, 1, [](const double* x) { return x[0] != 0 ? 0.0 : 1.0; });
  return elementwise(in, ins, 1,
                     [](const double* x) { return static_cast<double>(~static_cast<std::int32_t>(x[0])); });
}
template <class Bitwise>
Arrays bitwise(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 1, [](const double* x) {
    return static_cast<double>(Bitwise{}(static_cast<std::int32_t>(x[0]), static_cast<std::int32_t>(x[1])));
  });
}

Arrays select_n(const Arrays& in, const Instruction& ins) {
  // in[0] is the case index (a bool: false picks case 0), then the cases.
  return elementwise(in, ins, 1, [](const double* x) { return x[1 + static_cast<std::size_t>(x[0])]; });
}

Arrays clamp(const Arrays& in, const Instruction& ins) {
  return elementwise(in, ins, 2, [](const double* x) { return std::min(std::max(x[1], x[0]), x[2]); });
}

Arrays iota(const Arrays& in, const Instruction& ins) {
  const Shape& shape = ins.out_shapes[0];
  const auto dimension = static_cast<std::size_t>(ins.ints.at(0));
  return {charged(ins, in, 0, [&] {
    std::vector<double> out(static_cast<std::size_t>(num_elements(shape)));
    for (std::size_t e = 0; e < out.size(); ++e)
      out[e] = static_cast<double>(index_of(static_cast<std::int64_t>(e), shape)[dimension]);
    return out;
  })};
}

// ---- Matrix products
// ---------------------------------------------------------------------------------------

// The operand's dimensions in `order`; a no-op (no copy, no cost) when already in it.
Array ordered(const Array& a, const std::vector<int>& order) {
  return is_identity(order) ? a : transpose(a, order);
}

std::vector<int> free_dims(std::int64_t rank, const std::vector<std::int64_t>& contract,
                           const std::vector<std::int64_t>& batch) {
  std::vector<int> free;
  for (int d = 0; d < rank; ++d)
    if (std::find(contract.begin(), contract.end(), d) == contract.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end())
      free.push_back(d);
  return free;
}

std::int64_t product(const Shape& shape, const std::vector<int>& dims) {
  std::int64_t p = 1;
  for (int d : dims) p *= shape[static_cast<std::size_t>(d)];
  return p;
}

// `batch`, then `first`, then `second`: an operand's dimensions in the order a matmul reads them.
std::vector<int> concatenated(const std::vector<std::int64_t>& batch, const std::vector<int>& first,
                              const std::vector<int>& second) {
  std::vector<int> order(batch.begin(), batch.end());
  order.insert(order.end(), first.begin(), first.end());
  order.insert(order.end(), second.begin(), second.end());
  return order;
}

// lhs as (batch, free, contract), rhs as (batch, contract, free), one matmul, then the output's shape:
// dot_general's result is (batch, lhs free, rhs free). An operand laid out as the transposed matrix (lhs as
// (batch, contract, free), rhs as (batch, free, contract)) is read in place, as XLA's TransposeFolding and
// cuBLAS's transa / transb do; any other order is a transposed copy first.
Arrays dot_general(const Arrays& in, const Instruction& ins) {
  const auto &lc = ins.ints, &rc = ins.ints2, &lb = ins.groups.at(0), &rb = ins.groups.at(1);
  const Array &lhs = in[0], &rhs = in[1];
  const auto lf = free_dims(lhs.ndim(), lc, lb), rf = free_dims(rhs.ndim(), rc, rb);
  const std::vector<int> lcontract(lc.begin(), lc.end()), rcontract(rc.begin(), rc.end());
  const std::int64_t b = product(lhs.shape(), std::vector<int>(lb.begin(), lb.end())),
                     m = product(lhs.shape(), lf), k = product(lhs.shape(), lcontract),
                     n = product(rhs.shape(), rf);
  const auto matrix = [&](std::int64_t rows, std::int64_t cols) {
    return lb.empty() ? Shape{rows, cols} : Shape{b, rows, cols};
  };
  MatmulTranspose transpose;
  Array l, r;
  if (is_identity(concatenated(lb, lcontract, lf)) && !is_identity(concatenated(lb, lf, lcontract))) {
    transpose.a = true;
    l = reshape(lhs, matrix(k, m));
  } else {
    l = reshape(ordered(lhs, concatenated(lb, lf, lcontract)), matrix(m, k));
  }
  if (is_identity(concatenated(rb, rf, rcontract)) && !is_identity(concatenated(rb, rcontract, rf))) {
    transpose.b = true;
    r = reshape(rhs, matrix(n, k));
  } else {
    r = reshape(ordered(rhs, concatenated(rb, rcontract, rf)), matrix(k, n));
  }
  return {reshape(matmul(l, r, transpose), ins.out_shapes[0])};
}

// ---- Reductions -------------------------------------------------------------------------------------------

template <Array (*Reduce)(const Array&, std::optional<int>, bool)>
Arrays reduction(const Arrays& in, const Instruction& ins) {
  if (static_cast<std::int64_t>(ins.ints.size()) == in[0].ndim())
    return {reshape(Reduce(in[0], std::nullopt, false), ins.out_shapes[0])};
  auto axes = ins.ints;
  std::sort(axes.rbegin(), axes.rend());
  Array a = in[0];
  for (auto axis : axes) a = Reduce(a, axis_int(axis), false);
  return {a};
}

// A reduction computed here: `combine(acc, x)` from `init` over `axes`.
template <class Combine>
Arrays reduce_here(const Arrays& in, const Instruction& ins, double init, Combine combine) {
  const Shape& shape = in[0].shape();
  const Shape& out_shape = ins.out_shapes[0];
  return {charged(ins, in, static_cast<double>(in[0].size()), [&] {
    std::vector<double> out(static_cast<std::size_t>(num_elements(out_shape)), init);
    const auto values = in[0].to_doubles();
    const auto out_strides = strides_of(out_shape);
    for (std::size_t e = 0; e < values.size(); ++e) {
      const auto index = index_of(static_cast<std::int64_t>(e), shape);
      std::int64_t o = 0;
      std::size_t od = 0;
      for (std::size_t d = 0; d < index.size(); ++d)
        if (std::find(ins.ints.begin(), ins.ints.end(), static_cast<std::int64_t>(d)) == ins.ints.end())
          o += index[d] * out_strides[od++];
      out[static_cast<std::size_t>(o)] = combine(out[static_cast<std::size_t>(o)], values[e]);
    }
    return out;
  })};
}

Arrays reduce_prod(const Arrays& in, const Instruction& ins) {
  return reduce_here(in, ins, 1.0, [](double a, double x) { return a * x; });
}
Arrays reduce_and(const Arrays& in, const Instruction& ins) {
  return reduce_here(in, ins, 1.0, [](double a, double x) { return (a != 0 && x != 0) ? 1.0 : 0.0; });
}
Arrays reduce_or(const Arrays& in, const Instruction& ins) {
  return reduce_here(in, ins, 0.0, [](double a, double x) { return (a != 0 || x != 0) ? 1.0 : 0.0; });
}

// argmax / argmin along one axis: the first index of the extreme (NaN counts as the extreme, as XLA's).
template <bool Max>
Arrays arg_extreme(const Arrays& in, const Instruction& ins) {
  const Shape& shape = in[0].shape();
  const auto axis = static_cast<std::size_t>(ins.ints.at(0));
  return {charged(ins, in, static_cast<double>(in[0].size()), [&] {
    const auto values = in[0].to_doubles();
    const auto strides = strides_of(shape);
    std::vector<double> out(static_cast<std::size_t>(num_elements(ins.out_shapes[0])));
    for (std::size_t o = 0; o < out.size(); ++o) {
      // The output's index is the input's without `axis`.
      auto index = index_of(static_cast<std::int64_t>(o), ins.out_shapes[0]);
      index.insert(index.begin() + static_cast<std::ptrdiff_t>(axis), 0);
      std::int64_t base = 0;
      for (std::size_t d = 0; d < index.size(); ++d) base += index[d] * strides[d];
      std::int64_t best = 0;
      double best_value = values[static_cast<std::size_t>(base)];
      for (std::int64_t i = 1; i < shape[axis]; ++i) {
        const double v = values[static_cast<std::size_t>(base + i * strides[axis])];
        if (std::isnan(best_value)) break;
        if (std::isnan(v) || (Max ? v > best_value : v < best_value)) {
          best = i;
          best_value = v;
        }
      }
      out[o] = static_cast<double>(best);
    }
    return out;
  })};
}

// cumsum and friends along ints[0], reversed when ints2[0].
template <class Combine>
Arrays cumulative(const Arrays& in, const Instruction& ins, Combine combine) {
  const Shape& shape = in[0].shape();
  const auto axis = static_cast<std::size_t>(ins.ints.at(0));
  const bool reverse = !ins.ints2.empty() && ins.ints2[0] != 0;
  return {charged(ins, in, static_cast<double>(in[0].size()), [&] {
    auto values = in[0].to_doubles();
    const auto stride = strides_of(shape)[axis];
    for (std::size_t e = 0; e < values.size(); ++e) {
      const auto i = index_of(static_cast<std::int64_t>(e), shape)[axis];
      if (i != 0) continue;
      for (std::int64_t j = 1; j < shape[axis]; ++j) {
        const auto at = [&](std::int64_t t) {
          return static_cast<std::size_t>(static_cast<std::int64_t>(e) +
                                          (reverse ? shape[axis] - 1 - t : t) * stride);
        };
        values[at(j)] = combine(values[at(j - 1)], values[at(j)]);
      }
    }
    return values;
  })};
}
Arrays cumsum(const Arrays& in, const Instruction& ins) {
  return cumulative(in, ins, [](double a, double x) { return a + x; });
}
Arrays cumprod(const Arrays& in, const Instruction& ins) {
  return cumulative(in, ins, [](double a, double x) { return a * x; });
}
Arrays cummax(const Arrays& in, const Instruction& ins) {
  return cumulative(in, ins, [](double a, double x) { return std::max(a, x); });
}
Arrays cummin(const Arrays& in, const Instruction& ins) {
  return cumulative(in, ins, [](double a, double x) { return std::min(a, x); });
}

// ---- Layout -----------------------------------------------------------------------------------------------

// reshape's `dimensions` (ints, when given) transpose the operand first: lax.reshape reads it in that order.
Arrays reshape_rule(const Arrays& in, const Instruction& ins) {
  if (ins.ints.empty()) return {reshape(in[0], ins.out_shapes[0])};
  return {reshape(ordered(in[0], std::vector<int>(ins.ints.begin(), ins.ints.end())), ins.out_shapes[0])};
}

Arrays broadcast_in_dim(const Arrays& in, const Instruction& ins) {
  const Shape& shape = ins.out_shapes[0];
  if (in[0].shape() == shape) return {in[0]};
  // The operand's dimension i becomes the output's broadcast_dimensions[i]; the others are new, of size 1.
  Shape expanded(shape.size(), 1);
  for (std::size_t i = 0; i < ins.ints.size(); ++i)
    expanded[static_cast<std::size_t>(ins.ints[i])] = in[0].shape()[i];
  return {broadcast_to(reshape(in[0], expanded), shape)};
}

Arrays transpose_rule(const Arrays& in, const Instruction& ins) {
  return {ordered(in[0], std::vector<int>(ins.ints.begin(), ins.ints.end()))};
}

// A strided window of `a` (start, step per dimension) of the output's shape.
Arrays window(const Arrays& in, const Instruction& ins, const std::vector<std::int64_t>& start,
              const std::vector<std::int64_t>& step) {
  const Shape& shape = ins.out_shapes[0];
  return {charged(ins, {in[0]}, 0, [&] {
    const auto values = in[0].to_doubles();
    const auto strides = strides_of(in[0].shape());
    std::vector<double> out(static_cast<std::size_t>(num_elements(shape)));
    for (std::size_t e = 0; e < out.size(); ++e) {
      const auto index = index_of(static_cast<std::int64_t>(e), shape);
      std::int64_t from = 0;
      for (std::size_t d = 0; d < index.size(); ++d) from += (start[d] + index[d] * step[d]) * strides[d];
      out[e] = values[static_cast<std::size_t>(from)];
    }
    return out;
  })};
}

// rev: ints the dimensions reversed.
Arrays rev(const Arrays& in, const Instruction& ins) {
  const Shape& shape = in[0].shape();
  std::vector<std::int64_t> start(shape.size(), 0), step(shape.size(), 1);
  for (auto d : ins.ints) {
    start[static_cast<std::size_t>(d)] = shape[static_cast<std::size_t>(d)] - 1;
    step[static_cast<std::size_t>(d)] = -1;
  }
  return window(in, ins, start, step);
}

Arrays slice_rule(const Arrays& in, const Instruction& ins) {
  // ints: start indices, ints2: limits, groups[0]: strides (empty: 1).
  const auto& strides = ins.groups.empty() ? std::vector<std::int64_t>() : ins.groups[0];
  if (std::any_of(strides.begin(), strides.end(), [](std::int64_t s) { return s != 1; }))
    return window(in, ins, ins.ints, strides);
  Array a = in[0];
  for (std::size_t d = 0; d < ins.ints.size(); ++d)
    if (ins.ints[d] != 0 || ins.ints2[d] != a.shape()[d])
      a = slice(a, static_cast<int>(d), ins.ints[d], ins.ints2[d]);
  return {a};
}

// split: ints the sizes, ints2[0] the axis.
Arrays split_rule(const Arrays& in, const Instruction& ins) {
  Arrays out;
  std::int64_t start = 0;
  for (auto size : ins.ints) {
    out.push_back(slice(in[0], axis_int(ins.ints2.at(0)), start, start + size));
    start += size;
  }
  return out;
}

Arrays concatenate_rule(const Arrays& in, const Instruction& ins) {
  return {concatenate(in, axis_int(ins.ints.at(0)))};
}

// Start indices read from the operands (clamped as XLA clamps them so the window fits).
std::vector<std::int64_t> start_indices(const Arrays& in, std::size_t first, const Shape& operand,
                                        const Shape& window) {
  std::vector<std::int64_t> start(operand.size(), 0);
  for (std::size_t d = 0; d < operand.size(); ++d) {
    const auto i = static_cast<std::int64_t>(in[first + d].item(0));
    start[d] = std::clamp<std::int64_t>(i, 0, operand[d] - window[d]);
  }
  return start;
}

Arrays dynamic_slice(const Arrays& in, const Instruction& ins) {
  const Shape& shape = ins.out_shapes[0];
  if (any_abstract(in)) return {charged(ins, {in[0]}, 0, [] { return std::vector<double>(); })};
  return window(in, ins, start_indices(in, 1, in[0].shape(), shape),
                std::vector<std::int64_t>(shape.size(), 1));
}

Arrays dynamic_update_slice(const Arrays& in, const Instruction& ins) {
  return {charged(ins, {in[0], in[1]}, 0, [&] {
    auto values = in[0].to_doubles();
    const auto update = in[1].to_doubles();
    const auto start = start_indices(in, 2, in[0].shape(), in[1].shape());
    const auto strides = strides_of(in[0].shape());
    for (std::size_t e = 0; e < update.size(); ++e) {
      const auto index = index_of(static_cast<std::int64_t>(e), in[1].shape());
      std::int64_t to = 0;
      for (std::size_t d = 0; d < index.size(); ++d) to += (start[d] + index[d]) * strides[d];
      values[static_cast<std::size_t>(to)] = update[e];
    }
    return values;
  })};
}

// pad: ints low, ints2 high, groups[0] interior padding per dimension; in[1] the padding value.
Arrays pad(const Arrays& in, const Instruction& ins) {
  const Shape& shape = ins.out_shapes[0];
  return {charged(ins, in, 0, [&] {
    std::vector<double> out(static_cast<std::size_t>(num_elements(shape)), in[1].item(0));
    const auto values = in[0].to_doubles();
    const auto out_strides = strides_of(shape);
    for (std::size_t e = 0; e < values.size(); ++e) {
      const auto index = index_of(static_cast<std::int64_t>(e), in[0].shape());
      std::int64_t to = 0;
      bool inside = true;
      for (std::size_t d = 0; d < index.size(); ++d) {
        const auto at = ins.ints[d] + index[d] * (ins.groups[0][d] + 1);
        inside = inside && at >= 0 && at < shape[d];
        to += at * out_strides[d];
      }
      if (inside) out[static_cast<std::size_t>(to)] = values[e];
    }
    return out;
  })};
}

// ---- Collectives (over pmap's axis name, or a tuple of names under nested pmap)
// -------------------------------

AxisName axis_of(const Instruction& ins) {
  if (ins.axis_names.size() == 1) return AxisName(ins.axis_names.front());
  return AxisName(ins.axis_names);
}

Arrays psum_rule(const Arrays& in, const Instruction& ins) {
  if (in.size() == 1) return {psum(in[0], axis_of(ins), groups_of(ins))};
  std::vector<Tree> leaves(in.begin(), in.end());
  return psum(Tree::tuple(std::move(leaves)), axis_of(ins), groups_of(ins)).leaves();
}

template <Array (*Op)(const Array&, const AxisName&, const AxisIndexGroups&, const CollectiveOptions&)>
Arrays per_operand(const Arrays& in, const Instruction& ins) {
  Arrays out;
  for (const auto& a : in) out.push_back(Op(a, axis_of(ins), groups_of(ins), {}));
  return out;
}

Arrays all_gather_rule(const Arrays& in, const Instruction& ins) {
  return {all_gather(in[0], axis_of(ins), axis_int(ins.ints.at(0)), ins.ints.at(1) != 0, groups_of(ins))};
}
Arrays reduce_scatter_rule(const Arrays& in, const Instruction& ins) {
  return {psum_scatter(in[0], axis_of(ins), axis_int(ins.ints.at(0)), ins.ints.at(1) != 0, groups_of(ins))};
}
Arrays all_to_all_rule(const Arrays& in, const Instruction& ins) {
  return {all_to_all(in[0], axis_of(ins), axis_int(ins.ints.at(0)), axis_int(ins.ints.at(1)),
                     ins.ints.at(2) != 0, groups_of(ins))};
}
Arrays ppermute_rule(const Arrays& in, const Instruction& ins) {
  std::vector<std::pair<int, int>> perm;
  for (const auto& pair : ins.groups)
    perm.emplace_back(static_cast<int>(pair.at(0)), static_cast<int>(pair.at(1)));
  Arrays out;
  for (const auto& a : in) out.push_back(ppermute(a, axis_of(ins), perm));
  return out;
}
Arrays axis_index_rule(const Arrays&, const Instruction& ins) {
  return {axis_index(axis_of(ins))};
}

// ---- Nested pmap
// -------------------------------------------------------------------------------------------

// An xla_pmap in the program: its own program run as the pmap the engine expects on the next declared axis.
Arrays xla_pmap_rule(const Arrays& in, const Instruction& ins) {
  const std::shared_ptr<const Program> callee = ins.callees.at(0);
  const auto inner = pmap([callee](Args a) { return callee->run(std::move(a)); },
                          {.in_axes = pmap_axes(ins.ints),
                           .out_axes = pmap_axes(ins.ints2),
                           .axis_name = ins.axis_names.at(0),
                           .axis_size = static_cast<std::int64_t>(ins.number),
                           .name = "pmap"});
  return inner(Args(in.begin(), in.end())).leaves();
}

const std::map<std::string, Rule, std::less<>>& rules() {
  static const std::map<std::string, Rule, std::less<>> table = {
      {"add", binary<add>},
      {"add_any", binary<add>},
      {"sub", binary<subtract>},
      {"mul", binary<multiply>},
      {"div", div_rule},
      {"rem", rem_rule},
      {"max", binary<maximum>},
      {"min", binary<minimum>},
      {"pow", pow_rule},
      {"atan2", atan2_rule},
      {"neg", unary<negative>},
      {"abs", unary<abs>},
      {"exp", unary<exp>},
      {"log", unary<log>},
      {"tanh", unary<tanh>},
      {"sqrt", unary<sqrt>},
      {"square", unary<square>},
      {"rsqrt", unary_math<rsqrt, 2>},
      {"logistic", unary_math<logistic, 4>},
      {"sign", unary_math<sign, 1>},
      {"is_finite", unary_math<is_finite, 1>},
      {"exp2", unary_math<exp2, 1>},
      {"log1p", unary_math<log1p, 1>},
      {"expm1", unary_math<expm1, 1>},
      {"sin", unary_math<sin, 1>},
      {"cos", unary_math<cos, 1>},
      {"tan", unary_math<tan, 1>},
      {"erf", unary_math<erf, 1>},
      {"erf_inv", unary_math<erf_inv, 1>},
      {"cbrt", unary_math<cbrt, 1>},
      {"floor", unary_math<floor, 1>},
      {"ceil", unary_math<ceil, 1>},
      {"round", round_rule},
      {"integer_pow", integer_pow},
      {"eq", comparison<std::equal_to<>>},
      {"ne", comparison<std::not_equal_to<>>},
      {"lt", comparison<std::less<>>},
      {"le", comparison<std::less_equal<>>},
      {"gt", comparison<std::greater<>>},
      {"ge", comparison<std::greater_equal<>>},
      {"not", not_rule},
      {"and", bitwise<std::bit_and<>>},
      {"or", bitwise<std::bit_or<>>},
      {"xor", bitwise<std::bit_xor<>>},
      {"select_n", select_n},
      {"clamp", clamp},
      {"iota", iota},
      {"convert_element_type", convert_element_type},
      {"copy", identity},
      {"copy_p", identity},
      {"reduce_precision", identity},
      {"stop_gradient", identity},
      {"optimization_barrier", identity_all},
      {"split", split_rule},
      {"dot_general", dot_general},
      {"reduce_sum", reduction<sum>},
      {"reduce_max", reduction<max>},
      {"reduce_min", reduction<min>},
      {"reduce_prod", reduce_prod},
      {"reduce_and", reduce_and},
      {"reduce_or", reduce_or},
      {"argmax", arg_extreme<true>},
      {"argmin", arg_extreme<false>},
      {"cumsum", cumsum},
      {"cumprod", cumprod},
      {"cummax", cummax},
      {"cummin", cummin},
      {"broadcast_in_dim", broadcast_in_dim},
      {"reshape", reshape_rule},
      {"squeeze", reshape_rule},
      {"expand_dims", reshape_rule},
      {"transpose", transpose_rule},
      {"rev", rev},
      {"slice", slice_rule},
      {"concatenate", concatenate_rule},
      {"dynamic_slice", dynamic_slice},
      {"dynamic_update_slice", dynamic_update_slice},
      {"pad", pad},
      {"psum", psum_rule},
      {"pmax", per_operand<pmax>},
      {"pmin", per_operand<pmin>},
      {"all_gather", all_gather_rule},
      {"reduce_scatter", reduce_scatter_rule},
      {"all_to_all", all_to_all_rule},
      {"ppermute", ppermute_rule},
      {"axis_index", axis_index_rule},
      {"cond", cond_rule},
      {"while", while_rule},
      {"scan", scan_rule},
      {"gather", gather_rule},
      {"scatter", scatter_rule},
      {"scatter-add", scatter_rule},
      {"scatter-mul", scatter_rule},
      {"scatter-min", scatter_rule},
      {"scatter-max", scatter_rule},
      {"sort", sort_rule},
      {"conv_general_dilated", conv_general_dilated_rule},
      {"reduce_window_max", reduce_window_rule},
      {"reduce_window_min", reduce_window_rule},
      {"reduce_window_sum", reduce_window_rule},
      {"select_and_scatter_add", select_and_scatter_add_rule},
      {"xla_pmap", xla_pmap_rule},
  };
  return table;
}

}  // namespace

Rule find_rule(const std::string& primitive, const std::string& where) {
  const auto it = rules().find(primitive);
  if (it == rules().end())
    throw ValueError(fmt::format("spmdsim cannot run the JAX primitive '{}' at {}; it runs: {}", primitive,
                                 where, fmt::join(rule_names(), ", ")));
  return it->second;
}

std::vector<std::string> rule_names() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : rules()) names.push_back(name);
  return names;
}

}  // namespace spmdsim::python
