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
  // On abstract labels only the iota's shape matters: a vocabulary of values per device and step is not made.
  const Array iota = labels.is_abstract() ? Array::abstract({classes}, dtype) : Array::arange(classes, dtype);
  return relu(1.0 - abs(column - iota));
}

bool is_label_column(const Array& y, std::int64_t rows) {
  return y.dtype() == DType::i32 && y.ndim() == 1 && y.shape()[0] == rows;
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
  if (is_label_column(y, batch)) {
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

LossAndSeed unfused_softmax_cross_entropy(Array logits, const Array& labels, DType dtype) {
  const auto rows = logits.shape()[0];
  const auto classes = logits.shape()[1];
  if (!is_label_column(labels, rows))
    throw ValueError(
        fmt::format("unfused softmax cross-entropy: labels must be int32 of shape ({},), got {}{}", rows,
                    dtype_name(labels.dtype()), shape_str(labels.shape())));
  const DType logits_dtype = logits.dtype();
  const DType wide = loss_dtype(dtype);
  const auto widened = [&](const Array& a) { return a.dtype() == wide ? a : astype(a, wide); };
  const auto narrowed = [&](const Array& a) { return a.dtype() == dtype ? a : astype(a, dtype); };
  const auto kernel = [](std::string_view name, const std::vector<Array>& reads, const auto& body) {
    return fused(name, reads, [&] { return std::vector{body()}; }).front();
  };

  Array copy = kernel("contiguous", {logits}, [&] { return logits * 1.0; });
  Array input =
      dtype == logits_dtype ? copy : kernel("autocast", {copy}, [&] { return astype(copy, dtype); });
  Array logp = kernel("log_softmax", {input}, [&] {
    const Array x = widened(input);
    const Array shifted = x - max(x, -1, /*keepdims=*/true);
    return narrowed(shifted - log(sum(exp(shifted), -1, /*keepdims=*/true)));
  });
  logits = Array();
  copy = Array();
  input = Array();
  // nll_loss gathers one log-probability per row and sums them: `rows` FLOPs, the labels' bytes standing for
  // what it reads; its backward writes zeros and -1/rows at the labels. The one-hot products only give their
  // values.
  const double per_row = static_cast<double>(rows);
  Array loss = fused("nll_loss", {labels}, per_row, [&] {
                 return std::vector{-mean(sum(one_hot(labels, classes, wide) * widened(logp), -1))};
               }).front();

  Array d_logp = fused("nll_loss_backward", {labels}, per_row, [&] {
                   return std::vector{narrowed(one_hot(labels, classes, wide) * (-1.0 / per_row))};
                 }).front();
  Array d_input = kernel("log_softmax_backward", {d_logp, logp}, [&] {
    const Array g = widened(d_logp);
    return narrowed(g - exp(widened(logp)) * sum(g, -1, /*keepdims=*/true));
  });
  d_logp = Array();
  logp = Array();
  Array d_copy = dtype == logits_dtype
                     ? d_input
                     : kernel("autocast_backward", {d_input}, [&] { return astype(d_input, logits_dtype); });
  d_input = Array();
  Array seed = kernel("contiguous_backward", {d_copy}, [&] { return d_copy * 1.0; });
  return {loss, seed};
}

}  // namespace spmdsim::models
