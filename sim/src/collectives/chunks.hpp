// Cutting a flat array into contiguous chunks and joining them back. The chunks are views of the flat
// array's storage, and no copy is charged: in a real collective they are parts of one buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
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
// The size of that part k.
inline std::int64_t split_flat_size(std::int64_t total, int n, std::int64_t k) {
  return total / n + (k < total % n ? 1 : 0);
}
// Abstract arrays shaped as split_flat's parts, without copying any data.
std::vector<Array> split_flat_shapes(const Array& flat, int n);
// The 1-d concatenation of 1-d chunks (all of one dtype; abstract if any is).
Array join_flat(const std::vector<Array>& chunks);

inline int wrap(int i, int n) { return ((i % n) + n) % n; }

// split_flat's parts of a 1-d array, made one at a time where an algorithm needs them (block k taken modulo
// n), so that a rank walking a ring holds one at a time, not n.
struct FlatBlocks {
  Array flat;
  int n;
  std::int64_t offset(int k) const { return split_flat_offset(flat.size(), n, wrap(k, n)); }
  std::int64_t size(int k) const { return split_flat_size(flat.size(), n, wrap(k, n)); }
  // Block k as a view of the flat array.
  Array view(int k) const;
  // An abstract array shaped as block k.
  Array shape_of(int k) const;
};

// A 1-d array written block by block, as a collective writes its output buffer; an abstract one has nothing
// to write.
class FlatOutput {
 public:
  FlatOutput(std::int64_t size, DType dtype, bool abstract);
  // Shaped as `like` (1-d), abstract if it is.
  explicit FlatOutput(const Array& like) : FlatOutput(like.size(), like.dtype(), like.is_abstract()) {}
  // Writes `block` (1-d, of this array's dtype) from element `offset` on.
  void write(std::int64_t offset, const Array& block);
  Array result() &&;

 private:
  std::int64_t size_;
  DType dtype_;
  std::optional<Storage> storage_;  // none: abstract
};

}  // namespace spmdsim::collectives
