// The training losses and their gradient with respect to the logits, in spmdsim ops: inside a pmapped
// function every pass is charged to the device, and abstract logits cost what real ones do. Shared by every
// model's value_and_grad.
#pragma once

#include <string_view>

#include "spmdsim/array.hpp"

namespace spmdsim::models {

enum class Loss {
  mse,                    // mean over every element of (logits - y)^2; y has the logits' shape
  softmax_cross_entropy,  // mean over the batch of -sum(onehot * log_softmax(logits)); y is one-hot
                          // (float, the logits' shape) or integer labels (int32, [batch])
};
std::string_view loss_name(Loss loss);

// The dtype a loss is taken in: float32 at least (bf16/f16 logits are cast first, as mixed-precision
// training does).
DType loss_dtype(DType logits);

struct LossAndSeed {
  Array loss;  // 0-d
  Array seed;  // d loss / d logits, in the logits' dtype
};

// The loss of logits [batch, classes] (already in loss_dtype) against y, and the seed of the backward pass.
LossAndSeed loss_and_seed(Loss kind, const Array& logits, const Array& y);

}  // namespace spmdsim::models
