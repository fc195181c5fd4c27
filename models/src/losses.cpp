// The losses and their seeds, as jax.numpy computes them.
#include "spmdsim/models/losses.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// Integer labels [batch] as one-hot rows [batch, classes] in `dtype`: relu(1 - |label - class|) is 1 where
// they are equal and 0 elsewhere for integers (jax.nn.one_hot compares against an iota; spmdsim has no
// comparison op, so this takes four elementwise passes).
Array one_hot(const Array& labels, std::int64_t classes, DType dtype) {
  Array column = reshape(astype(labels, dtype), {labels.shape()[0], 1});
  return relu(1.0 - abs(column - Array::arange(classes, dtype)));
}

}  // namespace

std::string_view loss_name(Loss loss) {
  return loss == Loss::mse ? "mse" : "softmax_cross_entropy";
}

DType loss_dtype(DType logits) {
  return logits == DType::f64 ? DType::f64 : DType::f32;
}

LossAndSeed loss_and_seed(Loss kind, const Array& out, const Array& y) {
  const auto batch = out.shape()[0];
  const auto classes = out.shape()[1];
  if (kind == Loss::mse) {
    if (y.shape() != out.shape())
      throw ValueError(fmt::format("mse loss: targets of shape {} for logits of shape {}",
                                   shape_str(y.shape()), shape_str(out.shape())));
    Array diff = out - (y.dtype() == out.dtype() ? y : astype(y, out.dtype()));
    Array loss = mean(square(diff));
    return {loss, diff * (2.0 / static_cast<double>(out.size()))};
  }
  Array onehot;
  if (y.dtype() == DType::i32 && y.ndim() == 1 && y.shape()[0] == batch) {
    onehot = one_hot(y, classes, out.dtype());
  } else if (y.shape() == out.shape() && is_floating(y.dtype())) {
    onehot = y.dtype() == out.dtype() ? y : astype(y, out.dtype());
  } else {
    throw ValueError(fmt::format(
        "softmax cross-entropy: labels must be int32 of shape ({},) or one-hot floats of shape {}, got {}{}",
        batch, shape_str(out.shape()), dtype_name(y.dtype()), shape_str(y.shape())));
  }
  // log_softmax as jax.nn.log_softmax computes it: shift by the row maximum first.
  Array shifted = out - max(out, -1, /*keepdims=*/true);
  Array logp = shifted - log(sum(exp(shifted), -1, /*keepdims=*/true));
  Array loss = -mean(sum(onehot * logp, -1));
  return {loss, (exp(logp) - onehot) * (1.0 / static_cast<double>(batch))};
}

}  // namespace spmdsim::models
