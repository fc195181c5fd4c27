#include "spmdsim/dtype.hpp"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace spmdsim {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view short_name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 6> kDTypes{{
    {DType::f32, "float32", "f32", 4},
    {DType::f64, "float64", "f64", 8},
    {DType::bf16, "bfloat16", "bf16", 2},
    {DType::f16, "float16", "f16", 2},
    {DType::i32, "int32", "i32", 4},
    {DType::boolean, "bool", "bool", 1},
}};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }

int rank(DType dtype) {
  switch (dtype) {
    case DType::boolean: return 0;
    case DType::i32: return 1;
    case DType::bf16:
    case DType::f16: return 2;
    case DType::f32: return 3;
    case DType::f64: return 4;
  }
  return 0;
}

}  // namespace

std::size_t itemsize(DType dtype) { return info(dtype).size; }

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

DType parse_dtype(std::string_view name) {
  for (const auto& entry : kDTypes)
    if (name == entry.name || name == entry.short_name) return entry.dtype;
  throw std::invalid_argument(fmt::format(
      "unknown dtype '{}'; valid dtypes: float32 (f32), float64 (f64), bfloat16 (bf16), float16 (f16), int32 "
      "(i32), bool",
      name));
}

bool is_floating(DType dtype) { return rank(dtype) >= 2; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::bf16 && b == DType::f16) || (a == DType::f16 && b == DType::bf16)) return DType::f32;
  return rank(a) >= rank(b) ? a : b;
}

std::int64_t num_elements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace spmdsim
