// A multi-layer perceptron with a real forward and backward pass, written with spmdsim's device ops only:
// inside a pmapped function every FLOP of the forward, the loss and the backward is charged to the calling
// device, and the same code runs on abstract arrays (shapes only) for models too large to compute.
//
// Parameters are the tutorials' pytree, a list with one dict per layer:
//   [{'b': float32[h1], 'w': float32[in, h1]}, {'b': ..., 'w': ...}, ...]
// forward: x -> act(x @ w0 + b0) -> act(... ) -> ... @ w_last + b_last (no activation on the last layer).
//
// Precision: the forward and backward compute in the dtype of the parameters (inputs are cast to it); the
// loss is taken in float32 at least (bf16/f16 logits are cast to float32 first, as mixed-precision training
// does), and its gradient is cast back to the parameters' dtype before the backward pass.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/models/losses.hpp"
#include "spmdsim/models/value_and_grad.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

enum class Activation { tanh, relu };
std::string_view activation_name(Activation activation);

class Mlp {
 public:
  // layer_sizes: input features, hidden widths..., outputs (at least two entries, all positive).
  explicit Mlp(std::vector<std::int64_t> layer_sizes, Activation activation = Activation::tanh,
               Loss loss = Loss::mse);

  const std::vector<std::int64_t>& layer_sizes() const { return layer_sizes_; }
  int num_layers() const { return static_cast<int>(layer_sizes_.size()) - 1; }
  Activation activation() const { return activation_; }
  Loss loss_kind() const { return loss_; }
  // Psi: the number of parameter elements.
  std::int64_t num_parameters() const;

  // Weights drawn from std::mt19937(seed) through std::normal_distribution<double>, scaled by 0.1 (as the
  // tutorials' init_mlp_params), layer by layer in row-major order; biases zero. Host arrays.
  Tree init(unsigned seed, DType dtype = DType::f32) const;
  // The same shapes, abstract (no values), for simulating models too large to compute.
  Tree init_abstract(DType dtype = DType::f32) const;

  // The logits for a batch x of shape [batch, layer_sizes().front()].
  Array apply(const Tree& params, const Array& x) const;
  // The loss of a batch.
  Array loss(const Tree& params, const Array& x, const Array& y) const;
  // jax.value_and_grad of loss(params, x, y) with respect to params, by a hand-written backward pass.
  LossAndGrads value_and_grad(const Tree& params, const Array& x, const Array& y) const;
  // The same with the parameters fetched layer by layer (see LayerFetch; a unit is a layer's {'b', 'w'}),
  // telling `ready` each layer's gradients as the backward makes them, last layer first.
  LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& x, const Array& y,
                              const GradsReady& ready = {}) const;
  // The layers that pass fetches, in order: 0..n-1, then n-1..0.
  std::vector<int> fetch_order() const;

 private:
  void check_params(const Tree& params) const;

  std::vector<std::int64_t> layer_sizes_;
  Activation activation_;
  Loss loss_;
};

}  // namespace spmdsim::models
