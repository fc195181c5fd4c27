#include "spmdsim/models/gradient_buckets.hpp"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {

std::vector<GradientBucket> assign_buckets(const std::vector<Bytes>& leaf_bytes, Bytes cap) {
  if (!(cap > 0))
    throw ValueError(fmt::format("the gradient bucket size must be positive, got {} bytes", cap));
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  for (std::size_t i = leaf_bytes.size(); i-- > 0;) {
    open.leaves.push_back(i);
    open.bytes += leaf_bytes[i];
    if (open.bytes >= cap) buckets.push_back(std::exchange(open, GradientBucket{}));
  }
  if (!open.leaves.empty()) buckets.push_back(std::move(open));
  return buckets;
}

Array flatten_bucket(const std::vector<Array>& grads) {
  std::vector<Array> flat;
  flat.reserve(grads.size());
  for (const Array& g : grads) flat.push_back(reshape(g, Shape{g.size()}));
  return concatenate(flat);  // a copy even of one gradient: the bucket is a buffer of its own, as in DDP
}

std::vector<Array> unflatten_bucket(const Array& flat, const std::vector<Shape>& shapes) {
  std::vector<Array> out;
  std::int64_t offset = 0;
  for (const Shape& shape : shapes) {
    const std::int64_t size = num_elements(shape);
    out.push_back(reshape(slice(flat, 0, offset, offset + size), shape));
    offset += size;
  }
  if (offset != flat.size()) throw std::logic_error("a bucket's buffer does not match its gradients' shapes");
  return out;
}

}  // namespace spmdsim::models
