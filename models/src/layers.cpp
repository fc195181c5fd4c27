// The layers' forward and backward passes.
#include "layers.hpp"

#include <numbers>
#include <vector>

#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

constexpr double kLayerNormEpsilon = 1e-5;
// GeLU's tanh form: z/2 (1 + tanh(sqrt(2/pi) (z + c z^3))) with c = 0.044715.
constexpr double kGeluCubic = 0.044715;
constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;

struct Normalized {
  Array xhat;  // (x - mean) * rstd, per row
  Array rstd;  // 1 / sqrt(var + eps), [rows, 1]
};

Normalized normalize(const Array& x) {
  Array centered = x - mean(x, -1, /*keepdims=*/true);
  Array rstd = 1.0 / sqrt(mean(square(centered), -1, /*keepdims=*/true) + kLayerNormEpsilon);
  return {centered * rstd, rstd};
}

Array gelu_tanh(const Array& z) {
  return tanh((z + square(z) * z * kGeluCubic) * kSqrt2OverPi);
}

}  // namespace

Array dense(const Array& x, const Tree& params) {
  return matmul(x, params["kernel"].leaf()) + params["bias"].leaf();
}

// y = x W + b: dW = x^T dy, db = sum(dy, 0), dx = dy W^T (the matmuls read x and W transposed in place).
InputAndGrads dense_backward(const Array& x, const Tree& params, const Array& dy) {
  Tree grads = Tree::dict({{"bias", sum(dy, 0)}, {"kernel", matmul(x, dy, MatmulTranspose{.a = true})}});
  return {matmul(dy, params["kernel"].leaf(), MatmulTranspose{.b = true}), tag_as(grads, tags::gradients)};
}

// Each layer's elementwise chain and its reductions is one kernel (spmdsim::fused), as XLA fuses it: one read
// of its inputs, one write of its outputs.
Array layer_norm(const Array& x, const Tree& params) {
  const Array& scale = params["scale"].leaf();
  const Array& bias = params["bias"].leaf();
  return fused("layer_norm", {x, scale, bias}, [&] { return std::vector{normalize(x).xhat * scale + bias}; })
      .front();
}

// LayerNorm's backward from its input alone: the row statistics are recomputed, not kept, as Korthikanti et
// al.'s count (which has no O(sb) term) assumes.
InputAndGrads layer_norm_backward(const Array& x, const Tree& params, const Array& dy) {
  const Array& scale = params["scale"].leaf();
  const std::vector<Array> out = fused("layer_norm_backward", {x, scale, dy}, [&] {
    const Normalized n = normalize(x);
    const Array dxhat = dy * scale;
    return std::vector{n.rstd * (dxhat - mean(dxhat, -1, true) - n.xhat * mean(dxhat * n.xhat, -1, true)),
                       sum(dy, 0), sum(dy * n.xhat, 0)};
  });
  Tree grads = Tree::dict({{"bias", out[1]}, {"scale", out[2]}});
  return {out[0], tag_as(grads, tags::gradients)};
}

Array gelu(const Array& z) {
  return fused("gelu", {z}, [&] { return std::vector{z * 0.5 * (gelu_tanh(z) + 1.0)}; }).front();
}

// d/dz [z/2 (1 + t)] = (1 + t)/2 + z/2 (1 - t^2) sqrt(2/pi) (1 + 3c z^2), with t = gelu_tanh(z).
Array gelu_backward(const Array& z, const Array& dy) {
  return fused("gelu_backward", {z, dy},
               [&] {
                 const Array t = gelu_tanh(z);
                 const Array slope = (t + 1.0) * 0.5 + z * 0.5 * (1.0 - square(t)) * kSqrt2OverPi *
                                                           (square(z) * (3 * kGeluCubic) + 1.0);
                 return std::vector{dy * slope};
               })
      .front();
}

Array softmax(const Array& x) {
  return fused("softmax", {x},
               [&] {
                 const Array e = exp(x - max(x, -1, /*keepdims=*/true));
                 return std::vector{e / sum(e, -1, /*keepdims=*/true)};
               })
      .front();
}

Array softmax_backward(const Array& p, const Array& dp) {
  return fused("softmax_backward", {p, dp}, [&] { return std::vector{p * (dp - sum(dp * p, -1, true))}; })
      .front();
}

// jax.random.bernoulli draws the keep mask from a key; spmdsim has no random op, so a cast to bool writes the
// mask's bytes in its place (abstract arrays only: on real ones the mask would not be random).
Array dropout_keep(const Array& x) {
  return astype(x, DType::boolean);
}

// x where kept, 0 elsewhere. The 1/(1 - p) rescale is fused into XLA's select and is not charged.
Array dropout(const Array& x, const Array& keep) {
  return x * keep;
}

}  // namespace spmdsim::models
