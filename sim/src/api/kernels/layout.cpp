// Layout kernels: they move elements and compute nothing. Transpose, slice, take and broadcast_to are one
// strided gather; concatenate and stack copy row-major blocks.
#include <algorithm>
#include <functional>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim::kernels {
namespace {

using Strides = std::vector<std::int64_t>;

// Row-major strides, in elements.
Strides strides_of(const Shape& shape) {
  Strides strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  return std::accumulate(shape.begin() + static_cast<std::ptrdiff_t>(begin),
                         shape.begin() + static_cast<std::ptrdiff_t>(end), std::int64_t{1},
                         std::multiplies<>());
}

// Whether the strides walk out_shape's elements in row-major order, one after the other: then the gather
// reads one contiguous run (an axis of extent 1 may have any stride).
bool is_contiguous(const Shape& out_shape, const Strides& strides) {
  std::int64_t expected = 1;
  for (std::size_t d = out_shape.size(); d-- > 0;) {
    if (out_shape[d] != 1 && strides[d] != expected) return false;
    expected *= out_shape[d];
  }
  return true;
}

// out[i_0, ..., i_r] = a[offset + sum_d i_d * strides[d]]: stride 0 broadcasts, permuted strides transpose.
// One contiguous run (pmap's shards along a leading axis, a leading-axis slice) is a view, not a copy.
Array gather(const Array& a, const Shape& out_shape, const Strides& strides, std::int64_t offset) {
  if (is_contiguous(out_shape, strides)) return Array::view(a, offset, out_shape);
  std::int64_t n = num_elements(out_shape);
  // A contiguous last axis (a take or slice along a middle axis, say) is copied a row at a time instead of
  // element by element.
  const bool by_rows = !out_shape.empty() && strides.back() == 1;
  const std::int64_t run = by_rows ? out_shape.back() : 1;
  const std::size_t stepped_axes = by_rows ? out_shape.size() - 1 : out_shape.size();
  Storage values = a.visit_values([&](const auto& in) -> Storage {
    Vector<typename std::decay_t<decltype(in)>::Scalar> out(n);
    if (n == 0) return out;
    Shape index(stepped_axes, 0);
    std::int64_t source = offset;
    for (std::int64_t i = 0; i < n; i += run) {
      std::copy_n(in.data() + source, run, out.data() + i);
      for (std::size_t d = stepped_axes; d-- > 0;) {  // odometer step, last stepped axis fastest
        source += strides[d];
        if (++index[d] < out_shape[d]) break;
        source -= strides[d] * out_shape[d];
        index[d] = 0;
      }
    }
    return out;
  });
  return Array(out_shape, std::move(values));
}

KernelResult strided(const Array& a, const Shape& out_shape, const Strides& strides, std::int64_t offset) {
  OpCost cost{0, static_cast<double>(a.nbytes()) + bytes_of(num_elements(out_shape), a.dtype())};
  if (a.is_abstract()) return {Array::abstract(out_shape, a.dtype()), cost};
  return {gather(a, out_shape, strides, offset), cost};
}

// Concatenation along `axis` of arrays that agree on every other axis, in their promoted dtype.
KernelResult join(const std::vector<Array>& arrays, std::size_t axis) {
  DType dtype = arrays.front().dtype();
  Shape out_shape = arrays.front().shape();
  out_shape[axis] = 0;
  double bytes_in = 0;
  bool abstract = false;
  for (const Array& x : arrays) {
    dtype = promote_types(dtype, x.dtype());
    out_shape[axis] += x.shape()[axis];
    bytes_in += static_cast<double>(x.nbytes());
    abstract = abstract || x.is_abstract();
  }
  OpCost cost{0, bytes_in + bytes_of(num_elements(out_shape), dtype)};
  if (abstract) return {Array::abstract(out_shape, dtype), cost};

  // Each array is an (outer x inner) row-major block of the (outer x total inner) result.
  std::int64_t outer = product(out_shape, 0, axis);
  // Left unfilled: the blocks cover every element, and a zeroing pass would double the writes.
  const std::int64_t n = num_elements(out_shape);
  Storage values = std::visit([n](const auto& empty) -> Storage { return std::decay_t<decltype(empty)>(n); },
                              make_storage(dtype, 0));
  std::visit(
      [&](auto& out) {
        using T = typename std::decay_t<decltype(out)>::Scalar;
        Eigen::Map<RowMajorArray<T>> rows(out.data(), outer, product(out_shape, axis, out_shape.size()));
        std::int64_t column = 0;
        for (const Array& x : arrays) {
          Array converted = convert(x, dtype);
          std::int64_t inner = product(x.shape(), axis, x.shape().size());
          rows.middleCols(column, inner) =
              Eigen::Map<const RowMajorArray<T>>(converted.values<T>().data(), outer, inner);
          column += inner;
        }
      },
      values);
  return {Array(std::move(out_shape), std::move(values)), cost};
}

std::string shapes_str(const std::vector<Array>& arrays) {
  std::vector<std::string> shapes;
  for (const Array& x : arrays) shapes.push_back(shape_str(x.shape()));
  return fmt::format("{}", fmt::join(shapes, ", "));
}

}  // namespace

std::int64_t normalize_axis(std::int64_t axis, std::int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(fmt::format("axis {} is out of bounds for array of dimension {}", axis, ndim));
  return axis < 0 ? axis + ndim : axis;
}

Shape reshape_shape(const Shape& shape, const Shape& requested) {
  std::int64_t size = num_elements(shape);
  Shape out = requested;
  auto unknown = std::find(out.begin(), out.end(), -1);
  if (unknown != out.end()) {
    if (std::count(out.begin(), out.end(), -1) > 1)
      throw TypeError(fmt::format("can only specify one unknown axis size with a `-1` value, got {}",
                                  shape_str(requested)));
    *unknown = 1;
    std::int64_t known = num_elements(out);
    if (known == 0 || size % known != 0)
      throw TypeError(
          fmt::format("cannot reshape array of shape {} (size {}) into shape {} because the product of "
                      "specified axis sizes ({}) does not evenly divide {}",
                      shape_str(shape), size, shape_str(requested), known, size));
    *unknown = size / known;
  }
  if (num_elements(out) != size)
    throw TypeError(fmt::format("cannot reshape array of shape {} (size {}) into shape {} (size {})",
                                shape_str(shape), size, shape_str(requested), num_elements(requested)));
  if (std::any_of(out.begin(), out.end(), [](std::int64_t d) { return d < 0; }))
    throw TypeError(fmt::format("reshape new_sizes must all be positive, got {}.", shape_str(out)));
  return out;
}

KernelResult transpose(const Array& a, const std::vector<int>& axes) {
  Shape identity(static_cast<std::size_t>(a.ndim()));
  std::iota(identity.begin(), identity.end(), 0);
  Shape permutation;
  if (axes.empty()) {
    permutation.assign(identity.rbegin(), identity.rend());
  } else {
    for (int axis : axes) permutation.push_back(normalize_axis(axis, a.ndim()));
    if (!std::is_permutation(permutation.begin(), permutation.end(), identity.begin(), identity.end()))
      throw TypeError(
          fmt::format("transpose permutation isn't a permutation of operand dimensions, got permutation {} "
                      "for operand shape {}.",
                      shape_str(permutation), shape_str(a.shape())));
  }
  Strides in_strides = strides_of(a.shape());
  Shape out_shape;
  Strides strides;
  for (std::int64_t axis : permutation) {
    out_shape.push_back(a.shape()[static_cast<std::size_t>(axis)]);
    strides.push_back(in_strides[static_cast<std::size_t>(axis)]);
  }
  return strided(a, out_shape, strides, 0);
}

KernelResult slice(const Array& a, int axis, std::int64_t start, std::int64_t stop) {
  auto ax = static_cast<std::size_t>(normalize_axis(axis, a.ndim()));
  std::int64_t dim = a.shape()[ax];
  auto clamp = [dim](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + dim : i, 0, dim); };
  start = clamp(start);
  stop = std::max(clamp(stop), start);
  Shape out_shape = a.shape();
  out_shape[ax] = stop - start;
  Strides strides = strides_of(a.shape());
  return strided(a, out_shape, strides, start * strides[ax]);
}

KernelResult take(const Array& a, int axis, std::int64_t index) {
  auto ax = static_cast<std::size_t>(normalize_axis(axis, a.ndim()));
  std::int64_t dim = a.shape()[ax];
  if (index < -dim || index >= dim)
    throw IndexError(fmt::format("index {} is out of bounds for axis {} with size {}", index, axis, dim));
  Strides strides = strides_of(a.shape());
  std::int64_t offset = (index < 0 ? index + dim : index) * strides[ax];
  Shape out_shape = a.shape();
  out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(ax));
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(ax));
  return strided(a, out_shape, strides, offset);
}

KernelResult concatenate(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw ValueError("Need at least one array to concatenate.");
  const Array& first = arrays.front();
  if (first.ndim() == 0) throw ValueError("Zero-dimensional arrays cannot be concatenated.");
  auto ax = static_cast<std::size_t>(normalize_axis(axis, first.ndim()));
  for (const Array& x : arrays)
    if (x.ndim() != first.ndim())
      throw TypeError(fmt::format("Cannot concatenate arrays with different numbers of dimensions: got {}.",
                                  shapes_str(arrays)));
  for (const Array& x : arrays)
    for (std::size_t d = 0; d < x.shape().size(); ++d)
      if (d != ax && x.shape()[d] != first.shape()[d])
        throw TypeError(fmt::format(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
            "concatenated: concatenating along dimension {} for shapes {}.",
            ax, shapes_str(arrays)));
  return join(arrays, ax);
}

KernelResult stack(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw ValueError("Need at least one array to stack.");
  const Shape& shape = arrays.front().shape();
  auto ax = static_cast<std::size_t>(normalize_axis(axis, arrays.front().ndim() + 1));
  for (const Array& x : arrays)
    if (x.shape() != shape) throw ValueError("All input arrays must have the same shape.");
  // Stacking is concatenating along a new axis of size 1.
  Shape expanded_shape = shape;
  expanded_shape.insert(expanded_shape.begin() + static_cast<std::ptrdiff_t>(ax), 1);
  std::vector<Array> expanded;
  for (const Array& x : arrays) expanded.push_back(x.reshaped(expanded_shape));
  return join(expanded, ax);
}

KernelResult broadcast_to(const Array& a, const Shape& shape) {
  if (shape.size() < a.shape().size())
    throw ValueError(fmt::format("Cannot broadcast to shape with fewer dimensions: arr_shape={} shape={}",
                                 shape_str(a.shape()), shape_str(shape)));
  // a's axes align with the trailing axes of shape; new and size-1 axes repeat with stride 0.
  std::size_t lead = shape.size() - a.shape().size();
  Strides in_strides = strides_of(a.shape());
  Strides strides(shape.size(), 0);
  for (std::size_t d = 0; d < a.shape().size(); ++d) {
    std::int64_t dim = a.shape()[d];
    if (dim != shape[lead + d] && dim != 1)
      throw ValueError(fmt::format("Incompatible shapes for broadcasting: {} and requested shape {}",
                                   shape_str(a.shape()), shape_str(shape)));
    if (dim != 1) strides[lead + d] = in_strides[d];
  }
  if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; }))
    throw TypeError(fmt::format("broadcast_in_dim shape must have every element be nonnegative, got {}.",
                                shape_str(shape)));
  return strided(a, shape, strides, 0);
}

}  // namespace spmdsim::kernels
