// Element types of spmdsim arrays, with JAX's names and sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// g++ 12 warns of a read past the inline buffer in Boost's move of a small_vector, on a size range it cannot
// rule out and the vector's size excludes (a false positive of -Wstringop-overread).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#include <boost/container/small_vector.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace spmdsim {

// bf16 and f16 are real 2-byte storage types (Eigen::bfloat16 / Eigen::half), not just size tags.
enum class DType : std::uint8_t { f32, f64, bf16, f16, i32, boolean };

std::size_t itemsize(DType dtype);
// JAX's spelling: float32, float64, bfloat16, float16, int32, bool.
std::string_view dtype_name(DType dtype);
// Accepts JAX's spellings and the short ones (f32, f64, bf16, f16, i32, bool); throws on anything else.
DType parse_dtype(std::string_view name);
bool is_floating(DType dtype);
// Result type of a binary op: JAX's lattice restricted to our types (bool < i32 < f16, bf16 < f32 < f64;
// f16 with bf16 gives f32).
DType promote_types(DType a, DType b);

// Dimensions held inline up to rank 6, as XLA holds them (absl::InlinedVector<int64_t, 6>): every array
// handle has one, and copying handles is what a program does most.
using Shape = boost::container::small_vector<std::int64_t, 6>;

std::int64_t num_elements(const Shape& shape);
// Python tuple spelling, as JAX prints shapes: (), (4,), (4, 3).
std::string shape_str(const Shape& shape);

}  // namespace spmdsim
