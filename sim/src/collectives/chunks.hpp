// Cutting a flat array into contiguous chunks and joining them back. The chunks are views of the flat
// array's storage, and no copy is charged: in a real collective they are parts of one buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spmdsim/array.hpp"

namespace spmdsim::collectives {

// numpy.array_split of a 1-d array into n parts (views): the first size % n parts get one element more.
std::vector<Array> split_flat(const Array& flat, int n);
// A 1-d array in contiguous views of `piece` elements, the last one shorter (piece 0: the whole array).
std::vector<Array> pieces_of(const Array& flat, std::int64_t piece);
// Where split_flat's part k of `total` elements split n ways begins (k = n: the end).
inline std::int64_t split_flat_offset(std::int64_t total, int n, std::int64_t k) {
  return k * (total / n) + std::min<std::int64_t>(k, total % n);
}
// Abstract arrays shaped as split_flat's parts, without copying any data.
std::vector<Array> split_flat_shapes(const Array& flat, int n);
// The 1-d concatenation of 1-d chunks (all of one dtype; abstract if any is).
Array join_flat(const std::vector<Array>& chunks);

inline int wrap(int i, int n) { return ((i % n) + n) % n; }

}  // namespace spmdsim::collectives
