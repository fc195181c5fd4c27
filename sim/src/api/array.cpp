#include "spmdsim/array.hpp"

#include <cmath>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim {
namespace {

template <class T>
double to_double(T v) {
  return static_cast<double>(v);
}
template <>
double to_double(Eigen::bfloat16 v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
double to_double(Eigen::half v) {
  return static_cast<double>(static_cast<float>(v));
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Eigen::bfloat16> || std::is_same_v<T, Eigen::half>)
    return T(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else
    return static_cast<T>(v);
}

void check_shape(const Shape& shape) {
  for (auto d : shape)
    if (d < 0) throw std::invalid_argument(fmt::format("negative dimension in shape {}", shape_str(shape)));
}

// Text of one element as numpy prints it: shortest round-trip digits, "1." for integral floats.
std::string element_text(double v, DType dtype) {
  if (dtype == DType::boolean) return v != 0.0 ? "True" : "False";
  if (!is_floating(dtype)) return fmt::format("{}", static_cast<std::int64_t>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string text = dtype == DType::f64 ? fmt::format("{}", v) : fmt::format("{}", static_cast<float>(v));
  if (text.find_first_of(".e") == std::string::npos) text += ".";
  return text;
}

void append_nested(std::string& out, const std::vector<std::string>& cells, const Shape& shape, std::size_t dim,
                   std::int64_t offset, std::size_t width) {
  if (dim == shape.size()) {
    out += fmt::format("{:>{}}", cells[static_cast<std::size_t>(offset)], width);
    return;
  }
  std::int64_t stride = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
  out += '[';
  for (std::int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) {
      if (dim + 1 == shape.size()) {
        out += ' ';
      } else {
        out.append(shape.size() - dim - 1, '\n');
        out.append(dim + 1, ' ');
      }
    }
    append_nested(out, cells, shape, dim + 1, offset + i * stride, width);
  }
  out += ']';
}

}  // namespace

// Made at once, or on first read by `make` (once, then `make` is dropped with what it held).
class Array::Elements {
 public:
  explicit Elements(Storage storage)
      : deferred_(false), storage_(std::make_shared<const Storage>(std::move(storage))) {}
  explicit Elements(std::function<Array()> make) : deferred_(true), make_(std::move(make)) {}

  // The storage and the index of the first element in it.
  std::pair<const Storage*, std::int64_t> get() const {
    if (!deferred_) return {storage_.get(), 0};  // made at once and never changed: no lock on every read
    const std::lock_guard lock(making_);        // not call_once: a make that throws must leave it retryable
    if (make_) {
      const Array made = make_();
      const Location where = made.resolve();
      storage_ = made.buffer_->elements->storage_;
      offset_ = where.offset;
      make_ = nullptr;
    }
    return {storage_.get(), offset_};
  }

 private:
  const bool deferred_;
  mutable std::function<Array()> make_;
  mutable std::mutex making_;
  mutable std::shared_ptr<const Storage> storage_;
  mutable std::int64_t offset_ = 0;
};

Storage make_storage(DType dtype, std::int64_t n) {
  auto zeros = [n]<class T>() { return Storage(Vector<T>(Vector<T>::Constant(n, T(0)))); };
  switch (dtype) {
    case DType::f32: return zeros.operator()<float>();
    case DType::f64: return zeros.operator()<double>();
    case DType::bf16: return zeros.operator()<Eigen::bfloat16>();
    case DType::f16: return zeros.operator()<Eigen::half>();
    case DType::i32: return zeros.operator()<std::int32_t>();
    case DType::boolean: return zeros.operator()<bool>();
  }
  throw std::logic_error("unreachable dtype");
}

DType storage_dtype(const Storage& storage) { return static_cast<DType>(storage.index()); }

std::int64_t storage_size(const Storage& storage) {
  return std::visit([](const auto& v) { return static_cast<std::int64_t>(v.size()); }, storage);
}

// Every default array shares one immutable scalar: a program's value slots start and end as such arrays, and a
// buffer each would be two allocations per slot and device.
Array::Array()
    : Array([] {
        static const Array zero(Shape{}, make_storage(DType::f32, 1));
        return zero;
      }()) {}

Array::Array(Shape shape, Storage storage)
    : shape_(std::move(shape)), dtype_(storage_dtype(storage)) {
  check_shape(shape_);
  if (storage_size(storage) != num_elements(shape_))
    throw std::invalid_argument(fmt::format("storage of {} elements does not fit shape {}", storage_size(storage),
                                            shape_str(shape_)));
  auto elements = std::make_shared<const Elements>(std::move(storage));
  buffer_ = std::make_shared<const Buffer>(Buffer{std::move(elements), 0, nullptr});
}

Array::Array(Shape shape, DType dtype, std::shared_ptr<const Buffer> buffer)
    : shape_(std::move(shape)), dtype_(dtype), buffer_(std::move(buffer)) {}

Array Array::zeros(Shape shape, DType dtype) {
  check_shape(shape);
  auto n = num_elements(shape);
  return Array(std::move(shape), make_storage(dtype, n));
}

Array Array::full(Shape shape, double value, DType dtype) {
  check_shape(shape);
  Storage storage = make_storage(dtype, num_elements(shape));
  std::visit([value](auto& v) { v.setConstant(from_double<typename std::decay_t<decltype(v)>::Scalar>(value)); },
             storage);
  return Array(std::move(shape), std::move(storage));
}

Array Array::from_values(Shape shape, const std::vector<double>& values, DType dtype) {
  check_shape(shape);
  if (static_cast<std::int64_t>(values.size()) != num_elements(shape))
    throw std::invalid_argument(
        fmt::format("{} values given for shape {}", values.size(), shape_str(shape)));
  Storage storage = make_storage(dtype, num_elements(shape));
  std::visit(
      [&values](auto& v) {
        using T = typename std::decay_t<decltype(v)>::Scalar;
        for (std::size_t i = 0; i < values.size(); ++i) v[static_cast<Eigen::Index>(i)] = from_double<T>(values[i]);
      },
      storage);
  return Array(std::move(shape), std::move(storage));
}

Array Array::scalar(double value, DType dtype) { return full(Shape{}, value, dtype); }

Array Array::arange(std::int64_t n, DType dtype) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<double>(i);
  return from_values(Shape{n}, values, dtype);
}

Array Array::abstract(Shape shape, DType dtype) {
  check_shape(shape);
  // Every abstract array off a device has the same buffer, which nothing changes: one for all of them, not a
  // heap allocation per op and message.
  static const auto unplaced = std::make_shared<const Buffer>();
  return Array(std::move(shape), dtype, unplaced);
}

Array Array::view(const Array& base, std::int64_t offset, Shape shape) {
  check_shape(shape);
  const std::int64_t n = num_elements(shape);
  if (offset < 0 || offset + n > base.size())
    throw std::out_of_range(fmt::format("a view of {} elements from flat index {} does not fit in shape {}", n,
                                        offset, shape_str(base.shape())));
  if (base.is_abstract()) return abstract(std::move(shape), base.dtype());
  auto buffer =
      std::make_shared<const Buffer>(Buffer{base.buffer_->elements, base.buffer_->offset + offset, nullptr});
  return Array(std::move(shape), base.dtype(), std::move(buffer));
}

Array Array::deferred(Shape shape, DType dtype, std::function<Array()> make) {
  check_shape(shape);
  auto checked = [shape, dtype, make = std::move(make)] {
    Array made = make();
    if (made.shape() != shape || made.dtype() != dtype || made.is_abstract())
      throw std::logic_error(fmt::format("deferred values of {}{} were made as {}{}{}", dtype_name(dtype),
                                         shape_str(shape), made.is_abstract() ? "abstract " : "",
                                         dtype_name(made.dtype()), shape_str(made.shape())));
    return made;
  };
  auto elements = std::make_shared<const Elements>(std::move(checked));
  auto buffer = std::make_shared<const Buffer>(Buffer{std::move(elements), 0, nullptr});
  return Array(std::move(shape), dtype, std::move(buffer));
}

Array::Location Array::resolve() const {
  if (is_abstract())
    throw std::logic_error(
        fmt::format("abstract array {}{} has no values", dtype_name(dtype_), shape_str(shape_)));
  const auto [storage, offset] = buffer_->elements->get();
  return {storage, offset + buffer_->offset};
}

double Array::item(std::int64_t flat_index) const {
  if (flat_index < 0 || flat_index >= size())
    throw std::out_of_range(fmt::format("flat index {} out of range for shape {}", flat_index, shape_str(shape_)));
  return visit_values([flat_index](const auto& v) { return to_double(v[flat_index]); });
}

std::vector<double> Array::to_doubles() const {
  return visit_values([](const auto& v) {
    std::vector<double> out(static_cast<std::size_t>(v.size()));
    for (Eigen::Index i = 0; i < v.size(); ++i) out[static_cast<std::size_t>(i)] = to_double(v[i]);
    return out;
  });
}

Array Array::reshaped(Shape shape) const {
  check_shape(shape);
  if (num_elements(shape) != size())
    throw std::invalid_argument(fmt::format("cannot reshape array of shape {} (size {}) into shape {} (size {})",
                                            shape_str(shape_), size(), shape_str(shape), num_elements(shape)));
  return Array(std::move(shape), dtype_, buffer_);
}

Array Array::on_device(std::shared_ptr<DeviceAllocation> allocation) const {
  return Array(shape_, dtype_,
               std::make_shared<const Buffer>(Buffer{buffer_->elements, buffer_->offset, std::move(allocation)}));
}

Array Array::with_residency(std::shared_ptr<const Residency> residency) const {
  Array out = *this;
  out.residency_ = std::move(residency);
  return out;
}

std::string Array::to_string() const {
  if (is_abstract()) return fmt::format("abstract {}{}", dtype_name(dtype_), shape_str(shape_));
  auto values = to_doubles();
  std::vector<std::string> cells;
  cells.reserve(values.size());
  for (double v : values) cells.push_back(element_text(v, dtype_));
  // As numpy does: decimal points in one column, integer parts padded left, fractions padded right.
  std::size_t int_width = 0, frac_width = 0;
  for (const auto& c : cells) {
    const auto dot = c.find('.');
    int_width = std::max(int_width, dot == std::string::npos ? c.size() : dot);
    frac_width = std::max(frac_width, dot == std::string::npos ? 0 : c.size() - dot);
  }
  std::size_t width = 0;
  for (auto& c : cells) {
    const auto dot = c.find('.');
    const std::size_t int_part = dot == std::string::npos ? c.size() : dot;
    const std::size_t frac_part = dot == std::string::npos ? 0 : c.size() - dot;
    if (c.find_first_of("en") == std::string::npos) c = std::string(int_width - int_part, ' ') + c + std::string(frac_width - frac_part, ' ');
    width = std::max(width, c.size());
  }
  // A 0-d float prints as Python prints a float: 42.0, not numpy's array element 42.
  if (shape_.empty()) return cells.front().back() == '.' ? cells.front() + "0" : cells.front();
  std::string out;
  append_nested(out, cells, shape_, 0, 0, width);
  return out;
}

bool array_equal(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  if (a.is_abstract() || b.is_abstract()) return a.is_abstract() == b.is_abstract();
  return a.to_doubles() == b.to_doubles();
}

bool allclose(const Array& a, const Array& b, double rtol, double atol) {
  if (a.shape() != b.shape()) return false;
  auto x = a.to_doubles();
  auto y = b.to_doubles();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]))) return false;
  return true;
}

}  // namespace spmdsim
