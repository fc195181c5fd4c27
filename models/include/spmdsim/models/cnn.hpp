// A small convolutional network as an exact cost model: per layer its parameters, forward FLOPs and output
// bytes for a batch and a dtype. seeds_cnn() is the CNN of the tutorials' pmap data-parallel chapter (a Flax
// NNX module on 32x32x3 images):
//   conv 3->32 3x3, relu, max_pool 2x2/2, conv 32->64 3x3, relu, max_pool 2x2/2, flatten, dense 4096->10.
//
// FLOPs follow the convention spmdsim's ops charge: a multiply-add is 2 FLOPs, an add, a max or a comparison
// is 1. Per output element:
//   conv2d   2 k^2 c_in + 1 (the window's multiply-adds, zero padding included, plus the bias)
//   relu     1 (max(x, 0))
//   max_pool window^2 - 1 (comparisons)
//   dense    2 in + 1 (per output feature)
//   flatten  0 (a reshape, free as in XLA)
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "spmdsim/dtype.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::models {

// Flax NNX's defaults: stride 1, 'SAME' padding (the output keeps the input's height and width), a bias.
struct Conv2d {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t kernel = 0;  // square k x k window
};
struct Relu {};
// nnx.max_pool with window_shape = strides = (window, window) and 'VALID' padding: floor(H / window) rows.
struct MaxPool {
  std::int64_t window = 0;
};
// x.reshape(batch, -1).
struct Flatten {};
struct Dense {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
};
using CnnLayer = std::variant<Conv2d, Relu, MaxPool, Flatten, Dense>;

// The tutorials' CNNModel for images of seeds_cnn_input() (height, width, channels).
std::vector<CnnLayer> seeds_cnn(std::int64_t num_classes = 10);
Shape seeds_cnn_input();

struct CnnLayerCost {
  std::string kind;  // "conv2d", "relu", "max_pool", "flatten", "dense"
  Shape output;      // per example: (height, width, channels), or (features,) after flatten
  std::int64_t parameters = 0;
  Flops forward_flops = 0;  // for the whole batch
  Bytes output_bytes = 0;   // the layer's new output buffer for the batch (0 for flatten, a view)
};

struct CnnCost {
  std::vector<CnnLayerCost> layers;
  std::int64_t parameters = 0;
  Bytes parameter_bytes = 0;
  Flops forward_flops = 0;
  Bytes activation_bytes = 0;  // every layer's output, as a forward pass that keeps them all holds
};

// The cost of `layers` on a batch of inputs of per-example shape `input` (height, width, channels), in
// `dtype`. Throws ValueError when a layer does not fit what comes before it (naming the layer and shapes).
CnnCost cnn_cost(const std::vector<CnnLayer>& layers, const Shape& input, std::int64_t batch, DType dtype);

}  // namespace spmdsim::models
