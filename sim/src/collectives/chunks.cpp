#include "collectives/chunks.hpp"

#include <stdexcept>

namespace spmdsim::collectives {

std::vector<Array> split_flat(const Array& flat, int n) {
  if (flat.ndim() != 1) throw std::logic_error("split_flat expects a 1-d array");
  const FlatBlocks blocks{flat, n};
  std::vector<Array> parts;
  parts.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) parts.push_back(blocks.view(i));
  return parts;
}

Array FlatBlocks::view(int k) const { return Array::view(flat, offset(k), Shape{size(k)}); }

Array FlatBlocks::shape_of(int k) const { return Array::abstract(Shape{size(k)}, flat.dtype()); }

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
  FlatOutput joined(total, chunks.at(0).dtype(), abstract);
  std::int64_t offset = 0;
  for (const auto& c : chunks) {
    joined.write(offset, c);
    offset += c.size();
  }
  return std::move(joined).result();
}

FlatOutput::FlatOutput(std::int64_t size, DType dtype, bool abstract) : size_(size), dtype_(dtype) {
  if (!abstract) storage_ = make_storage(dtype, size);
}

void FlatOutput::write(std::int64_t offset, const Array& block) {
  if (!storage_) return;
  std::visit(
      [&](auto& dst) {
        using T = typename std::decay_t<decltype(dst)>::Scalar;
        dst.segment(offset, block.size()) = block.values<T>();
      },
      *storage_);
}

Array FlatOutput::result() && {
  if (!storage_) return Array::abstract(Shape{size_}, dtype_);
  return Array(Shape{size_}, std::move(*storage_));
}

}  // namespace spmdsim::collectives
