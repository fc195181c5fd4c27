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

// Softmax cross-entropy of logits [rows, classes] against int32 labels [rows] as PyTorch runs
// nn.CrossEntropyLoss on a language model's materialised logits (Hugging Face's GPT2LMHeadModel, which first
// makes the shifted logits contiguous), each step its own kernel, its tensors in `dtype` with float32
// arithmetic inside: the logits' own (a model in half precision) or float32 (under torch.autocast, whose
// float32 list has cross_entropy: the copy is cast to float32 first and the gradient cast back):
//   forward   a contiguous copy of the logits; log_softmax, kept for the backward; nll_loss. The logits and
//             the copy are released once log_softmax has read them: the backward needs neither (PyTorch
//             frees them as the loss and the training step return, with nothing larger made in between);
//   backward  nll_loss's gradient [rows, classes] (zeros and -1/rows at the labels); log_softmax's; the
//             copy's (the gradient of the logits, the seed).
// So three [rows, classes] tensors are live at log_softmax and at its backward, where the fused form holds
// two. The logits are handed over, to be released where PyTorch frees them. The shift itself (HF drops each
// sequence's last position) is left out: the labels here are already each position's target.
LossAndSeed unfused_softmax_cross_entropy(Array logits, const Array& labels, DType dtype);

}  // namespace spmdsim::models
