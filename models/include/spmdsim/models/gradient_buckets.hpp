// PyTorch DDP's gradient buckets, for the dp-overlap strategy (data_parallel.hpp). DDP assigns the
// parameters to buckets in the order their gradients become ready, the reverse of the parameters' order, and
// closes a bucket as soon as it holds the cap or more (torch.distributed's
// compute_bucket_assignment_by_size; the cap is bucket_cap_mb, 25 MiB by default), so a bucket can exceed the
// cap by its last gradient and the last bucket holds the rest. DDP's smaller first bucket (1 MiB, to start
// communicating early) is not modelled: every bucket gets the same cap.
//
// A bucket's gradients travel as one buffer: flattened to 1-D and concatenated in the bucket's order,
// reduced with one all-reduce, and cut back into the gradients' shapes.
#pragma once

#include <cstddef>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::models {

struct GradientBucket {
  std::vector<std::size_t> leaves;  // indices in the params' flattening order, in the order they join
  Bytes bytes = 0;
};

// leaf_bytes: the gradients' sizes in the params' flattening order; they become ready last first. cap > 0.
std::vector<GradientBucket> assign_buckets(const std::vector<Bytes>& leaf_bytes, Bytes cap);

// The gradients of a bucket as one 1-D buffer, in the given order.
Array flatten_bucket(const std::vector<Array>& grads);
// The bucket's buffer cut back into arrays of these shapes, in order.
std::vector<Array> unflatten_bucket(const Array& flat, const std::vector<Shape>& shapes);

}  // namespace spmdsim::models
