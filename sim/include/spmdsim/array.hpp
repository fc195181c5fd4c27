// Array: an n-dimensional, row-major, dtype-tagged value with Eigen storage, or an abstract one (shape and
// dtype only, like jax.eval_shape) that every operation and collective accepts and costs identically.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "spmdsim/dtype.hpp"

namespace spmdsim {

template <class T>
using Vector = Eigen::Array<T, Eigen::Dynamic, 1>;

// One alternative per DType, in DType's order.
using Storage = std::variant<Vector<float>, Vector<double>, Vector<Eigen::bfloat16>, Vector<Eigen::half>,
                             Vector<std::int32_t>, Vector<bool>>;

class DeviceAllocation;  // sim/memory.hpp: a device buffer's entry in its device's memory ledger.
struct Residency;        // sim/residency.hpp: the device shards behind a pmap result.

// Immutable, like a JAX array: operations return new arrays; copies share storage, and so do views (a
// contiguous run of another array's elements) and reshapes.
class Array {
 public:
  // A float32 scalar 0.
  Array();
  Array(Shape shape, Storage storage);

  static Array zeros(Shape shape, DType dtype = DType::f32);
  static Array full(Shape shape, double value, DType dtype = DType::f32);
  // Values given in row-major order, converted to dtype.
  static Array from_values(Shape shape, const std::vector<double>& values, DType dtype = DType::f32);
  // A 0-d array.
  static Array scalar(double value, DType dtype = DType::f32);
  // 0, 1, ..., n-1 as a 1-d array.
  static Array arange(std::int64_t n, DType dtype = DType::i32);
  // Shape and dtype only: no storage, no values.
  static Array abstract(Shape shape, DType dtype = DType::f32);
  // The num_elements(shape) elements of `base` from its row-major flat index `offset`, with `shape`: the
  // same storage, not a copy (as numpy's basic slicing). Host-side: bound to no device buffer.
  static Array view(const Array& base, std::int64_t offset, Shape shape);
  // Values made when first read, once (a pmap result is stacked from its shards only if the host reads it,
  // as JAX assembles a sharded array). make must return an array of this shape and dtype.
  static Array deferred(Shape shape, DType dtype, std::function<Array()> make);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  std::int64_t ndim() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t size() const { return num_elements(shape_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(size()) * itemsize(dtype_); }
  bool is_abstract() const { return buffer_->elements == nullptr; }

  // The values, as T (std::bad_variant_access if T is not the dtype's element type); throws
  // std::logic_error on an abstract array.
  template <class T>
  Eigen::Map<const Vector<T>> values() const {
    const Location where = resolve();
    return Eigen::Map<const Vector<T>>(std::get<Vector<T>>(*where.storage).data() + where.offset, size());
  }
  // fn(values()) with the dtype's element type; every instantiation of fn must return the same type.
  template <class Fn>
  decltype(auto) visit_values(Fn&& fn) const {
    const Location where = resolve();
    return std::visit(
        [&](const auto& whole) -> decltype(auto) {
          using T = typename std::decay_t<decltype(whole)>::Scalar;
          return fn(Eigen::Map<const Vector<T>>(whole.data() + where.offset, size()));
        },
        *where.storage);
  }
  // Element at a row-major flat index, converted to double.
  double item(std::int64_t flat_index) const;
  std::vector<double> to_doubles() const;

  // Same storage (and device buffer), new shape of the same size: reshape is free, as in XLA.
  Array reshaped(Shape shape) const;

  // The device buffer this array lives in, or null for a host array.
  const std::shared_ptr<DeviceAllocation>& allocation() const { return buffer_->allocation; }
  // A copy of this array's handle bound to a device buffer (storage shared, not copied).
  Array on_device(std::shared_ptr<DeviceAllocation> allocation) const;

  // For a pmap result: its shards on the devices; null for an array that only the host holds.
  const std::shared_ptr<const Residency>& residency() const { return residency_; }
  // The same values, marked as held by devices.
  Array with_residency(std::shared_ptr<const Residency> residency) const;

  // numpy-like text: [[ 0.  1.] [ 2.  3.]] for arrays, "42.0" for scalars, "abstract float32(4, 3)".
  std::string to_string() const;

 private:
  // The storage behind arrays, made at once or on first read (defined in array.cpp).
  class Elements;
  // Where an array's elements are (shared by every handle, also across devices: binding to a device copies
  // no data) and the device buffer they are accounted to.
  struct Buffer {
    std::shared_ptr<const Elements> elements;  // null: abstract
    std::int64_t offset = 0;                   // of the array's first element in the elements
    std::shared_ptr<DeviceAllocation> allocation;
  };
  struct Location {
    const Storage* storage;
    std::int64_t offset;
  };
  Array(Shape shape, DType dtype, std::shared_ptr<const Buffer> buffer);
  // The storage holding this array's elements and the first one's index there; makes deferred values.
  Location resolve() const;

  Shape shape_;
  DType dtype_;
  std::shared_ptr<const Buffer> buffer_;
  std::shared_ptr<const Residency> residency_;
};

// Storage of n elements of dtype, zero-initialised.
Storage make_storage(DType dtype, std::int64_t n);
DType storage_dtype(const Storage& storage);
std::int64_t storage_size(const Storage& storage);

// Same shape, same dtype and identical values (abstract arrays compare by shape and dtype).
bool array_equal(const Array& a, const Array& b);
// Same shape and |a - b| <= atol + rtol * |b| elementwise.
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8);

}  // namespace spmdsim
