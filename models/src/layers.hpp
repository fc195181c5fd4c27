// Differentiable layers in spmdsim ops, each a forward and a hand-written backward: the transformer's
// building blocks. Params are Flax-named dicts ({'bias', 'kernel'} for dense, {'bias', 'scale'} for
// LayerNorm); every backward tags the gradients it makes.
#pragma once

#include "spmdsim/array.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

struct InputAndGrads {
  Array dx;
  Tree grads;  // the layer's params' structure, tagged gradients
};

// y = x W + b over the last axis of a 2-d x.
Array dense(const Array& x, const Tree& params);
InputAndGrads dense_backward(const Array& x, const Tree& params, const Array& dy);

// LayerNorm over the last axis (epsilon 1e-5, GPT-2's and Flax's default). The backward takes the forward's
// input and recomputes the row statistics.
Array layer_norm(const Array& x, const Tree& params);
InputAndGrads layer_norm_backward(const Array& x, const Tree& params, const Array& dy);

// GeLU in its tanh form (Hendrycks & Gimpel 2016), as GPT-2 computes it; the backward takes GeLU's input.
Array gelu(const Array& z);
Array gelu_backward(const Array& z, const Array& dy);

// Softmax over the last axis; the backward takes the softmax's output p and d loss / d p.
Array softmax(const Array& x);
Array softmax_backward(const Array& p, const Array& dp);

// Dropout: a keep mask of one byte per element (a stand-in for a random draw: its cost is right, its values
// are not, so it serves abstract arrays), and x where kept. The backward is dropout(dy, keep).
Array dropout_keep(const Array& x);
Array dropout(const Array& x, const Array& keep);

}  // namespace spmdsim::models
