#include "collectives/chunks.hpp"

#include <stdexcept>

namespace spmdsim::collectives {

std::vector<Array> split_flat(const Array& flat, int n) {
  if (flat.ndim() != 1) throw std::logic_error("split_flat expects a 1-d array");
  std::vector<Array> parts;
  parts.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::int64_t offset = split_flat_offset(flat.size(), n, i);
    parts.push_back(Array::view(flat, offset, Shape{split_flat_offset(flat.size(), n, i + 1) - offset}));
  }
  return parts;
}

std::vector<Array> pieces_of(const Array& flat, std::int64_t piece) {
  if (piece <= 0 || flat.size() <= piece) return {flat};
  std::vector<Array> pieces;
  for (std::int64_t begin = 0; begin < flat.size(); begin += piece)
    pieces.push_back(Array::view(flat, begin, Shape{std::min(piece, flat.size() - begin)}));
  return pieces;
}

std::vector<Array> split_flat_shapes(const Array& flat, int n) {
  return split_flat(Array::abstract(flat.shape(), flat.dtype()), n);
}

Array join_flat(const std::vector<Array>& chunks) {
  std::int64_t total = 0;
  bool abstract = false;
  for (const auto& c : chunks) {
    total += c.size();
    abstract = abstract || c.is_abstract();
  }
  const DType dtype = chunks.at(0).dtype();
  if (abstract) return Array::abstract(Shape{total}, dtype);
  Storage out = make_storage(dtype, total);
  std::visit(
      [&](auto& dst) {
        using T = typename std::decay_t<decltype(dst)>::Scalar;
        std::int64_t offset = 0;
        for (const auto& c : chunks) {
          dst.segment(offset, c.size()) = c.values<T>();
          offset += c.size();
        }
      },
      out);
  return Array(Shape{total}, std::move(out));
}

}  // namespace spmdsim::collectives
