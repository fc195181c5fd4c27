// The MLP's forward pass and hand-written backward pass, in spmdsim ops only (the losses are losses.cpp's).
#include "spmdsim/models/mlp.hpp"

#include <cmath>
#include <random>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// The smallest positive value of a floating dtype (its smallest subnormal).
double smallest_positive(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return std::ldexp(1.0, -1074);
    case DType::bf16:
      return std::ldexp(1.0, -133);
    case DType::f16:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -149);  // float32
  }
}

// relu'(z) as a 0/1 mask computed from h = relu(z) >= 0: h / max(h, tiny) with tiny the dtype's smallest
// positive value is exactly 1 where h > 0 (x / x == 1 in IEEE arithmetic) and exactly 0 where h == 0, which
// is jax.nn.relu's derivative (0 at 0). spmdsim has no comparison op; XLA would spend one compare-select
// pass where this spends two elementwise passes.
Array relu_mask(const Array& h) {
  return h / maximum(h, Array::scalar(smallest_positive(h.dtype()), h.dtype()));
}

// The hidden activation's derivative at the layer whose output is h, times the incoming gradient.
Array activation_backward(Activation activation, const Array& h, const Array& dh) {
  if (activation == Activation::tanh) return dh * (1.0 - square(h));  // tanh' = 1 - tanh^2
  return dh * relu_mask(h);
}

Array activate(Activation activation, const Array& z) {
  return activation == Activation::tanh ? tanh(z) : relu(z);
}

void check_layer(const Tree& layer, int l, std::int64_t in, std::int64_t out) {
  const auto* dict = std::get_if<Tree::Dict>(&layer.node());
  if (dict == nullptr || dict->items.size() != 2 || !dict->items.count("w") || !dict->items.count("b") ||
      !layer["w"].is_leaf() || !layer["b"].is_leaf())
    throw ValueError(
        fmt::format("MLP layer {}: expected a dict {{'b': array, 'w': array}}, got {}", l, layer.treedef()));
  const Array& w = layer["w"].leaf();
  const Array& b = layer["b"].leaf();
  if (w.shape() != Shape{in, out} || b.shape() != Shape{out})
    throw ValueError(fmt::format("MLP layer {}: expected w{} and b{}, got w{} and b{}", l,
                                 shape_str({in, out}), shape_str({out}), shape_str(w.shape()),
                                 shape_str(b.shape())));
  if (!is_floating(w.dtype()) || b.dtype() != w.dtype())
    throw TypeError(fmt::format("MLP layer {}: w and b must share one floating dtype, got {} and {}", l,
                                dtype_name(w.dtype()), dtype_name(b.dtype())));
}

}  // namespace

std::string_view activation_name(Activation activation) {
  return activation == Activation::tanh ? "tanh" : "relu";
}

Mlp::Mlp(std::vector<std::int64_t> layer_sizes, Activation activation, Loss loss)
    : layer_sizes_(std::move(layer_sizes)), activation_(activation), loss_(loss) {
  if (layer_sizes_.size() < 2)
    throw ValueError(
        fmt::format("an MLP needs at least an input and an output size, got {} sizes", layer_sizes_.size()));
  for (auto size : layer_sizes_)
    if (size < 1) throw ValueError(fmt::format("MLP layer sizes must be positive, got {}", size));
}

std::int64_t Mlp::num_parameters() const {
  std::int64_t total = 0;
  for (int l = 0; l < num_layers(); ++l) total += (layer_sizes_[l] + 1) * layer_sizes_[l + 1];
  return total;
}

Tree Mlp::init(unsigned seed, DType dtype) const {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Tree> layers;
  for (int l = 0; l < num_layers(); ++l) {
    const auto in = layer_sizes_[l];
    const auto out = layer_sizes_[l + 1];
    std::vector<double> w(static_cast<std::size_t>(in * out));
    for (auto& v : w) v = normal(generator) * 0.1;
    layers.push_back(
        Tree::dict({{"b", Array::zeros({out}, dtype)}, {"w", Array::from_values({in, out}, w, dtype)}}));
  }
  return Tree::list(std::move(layers));
}

Tree Mlp::init_abstract(DType dtype) const {
  std::vector<Tree> layers;
  for (int l = 0; l < num_layers(); ++l) {
    const auto in = layer_sizes_[l];
    const auto out = layer_sizes_[l + 1];
    layers.push_back(
        Tree::dict({{"b", Array::abstract({out}, dtype)}, {"w", Array::abstract({in, out}, dtype)}}));
  }
  return Tree::list(std::move(layers));
}

void Mlp::check_params(const Tree& params) const {
  if (!std::holds_alternative<Tree::List>(params.node()) || static_cast<int>(params.size()) != num_layers())
    throw ValueError(
        fmt::format("MLP params: expected a list of {} layer dicts, got {}", num_layers(), params.treedef()));
}

Array Mlp::apply(const Tree& params, const Array& x) const {
  check_params(params);
  Array a = x;
  for (int l = 0; l < num_layers(); ++l) {
    const Tree& layer = params[static_cast<std::size_t>(l)];
    check_layer(layer, l, layer_sizes_[l], layer_sizes_[l + 1]);
    const Array& w = layer["w"].leaf();
    if (l == 0 && a.dtype() != w.dtype()) a = astype(a, w.dtype());
    Array z = matmul(a, w) + layer["b"].leaf();
    a = l + 1 < num_layers() ? activate(activation_, z) : z;
  }
  return a;
}

Array Mlp::loss(const Tree& params, const Array& x, const Array& y) const {
  Array logits = apply(params, x);
  Array out =
      logits.dtype() == loss_dtype(logits.dtype()) ? logits : astype(logits, loss_dtype(logits.dtype()));
  return loss_and_seed(loss_, out, y).loss;
}

LossAndGrads Mlp::value_and_grad(const Tree& params, const Array& x, const Array& y) const {
  check_params(params);
  return value_and_grad([&params](int l) { return params[static_cast<std::size_t>(l)]; }, x, y);
}

std::vector<int> Mlp::fetch_order() const {
  std::vector<int> order;
  for (int l = 0; l < num_layers(); ++l) order.push_back(l);
  for (int l = num_layers() - 1; l >= 0; --l) order.push_back(l);
  return order;
}

LossAndGrads Mlp::value_and_grad(const LayerFetch& fetch, const Array& x, const Array& y,
                                 const GradsReady& ready) const {
  const int layers = num_layers();
  if (x.ndim() != 2 || x.shape()[1] != layer_sizes_.front())
    throw ValueError(fmt::format("MLP input: expected shape (batch, {}), got {}", layer_sizes_.front(),
                                 shape_str(x.shape())));

  // Forward, keeping each layer's input for the backward pass: saved[l] is x (cast to the parameters'
  // dtype) for l = 0 and act(z_{l-1}) after that. What this pass made is tagged as activations.
  std::vector<Array> saved;
  Array a = x;
  Array logits;
  for (int l = 0; l < layers; ++l) {
    Tree layer = fetch(l);
    check_layer(layer, l, layer_sizes_[l], layer_sizes_[l + 1]);
    const Array& w = layer["w"].leaf();
    if (l == 0 && a.dtype() != w.dtype()) a = tag_as(astype(a, w.dtype()), tags::activations);
    Array z = matmul(a, w) + layer["b"].leaf();
    saved.push_back(a);
    if (l + 1 < layers)
      a = tag_as(activate(activation_, z), tags::activations);
    else
      logits = z;
  }
  a = Array();

  const DType compute = logits.dtype();
  Array out = compute == loss_dtype(compute) ? logits : astype(logits, loss_dtype(compute));
  logits = Array();
  LossAndSeed ls = loss_and_seed(loss_, out, y);
  out = Array();
  Array dz = ls.seed.dtype() == compute ? ls.seed : astype(ls.seed, compute);
  ls.seed = Array();

  // Backward, last layer first; each layer's saved input is released once its gradients are made.
  std::vector<Tree> grads(static_cast<std::size_t>(layers));
  for (int l = layers - 1; l >= 0; --l) {
    Tree layer = fetch(l);
    check_layer(layer, l, layer_sizes_[l], layer_sizes_[l + 1]);
    Array input = std::move(saved[static_cast<std::size_t>(l)]);
    saved[static_cast<std::size_t>(l)] = Array();
    Array dw = tag_as(matmul(input, dz, MatmulTranspose{.a = true}), tags::gradients);
    Array db = tag_as(sum(dz, 0), tags::gradients);
    Tree layer_grads = Tree::dict({{"b", db}, {"w", dw}});
    dw = Array();
    db = Array();
    if (ready)
      ready(l, std::move(layer_grads));
    else
      grads[static_cast<std::size_t>(l)] = std::move(layer_grads);
    if (l > 0)
      dz = activation_backward(activation_, input, matmul(dz, layer["w"].leaf(), MatmulTranspose{.b = true}));
  }
  return {ls.loss, Tree::list(std::move(grads))};
}

}  // namespace spmdsim::models
