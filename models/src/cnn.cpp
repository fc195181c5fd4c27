// The CNN cost model: each layer maps its input shape to its output shape and its cost.
#include "spmdsim/models/cnn.hpp"

#include <fmt/format.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::models {
namespace {

// One layer's cost per example; the batch and the dtype are applied by cnn_cost.
struct PerExample {
  std::string kind;
  Shape output;
  std::int64_t parameters = 0;
  double flops = 0;
  bool new_buffer = true;
};

void require_image(const Shape& input, std::string_view kind, std::size_t index) {
  if (input.size() != 3)
    throw ValueError(fmt::format("CNN layer {} ({}): expects an image (height, width, channels), got {}",
                                 index, kind, shape_str(input)));
}

PerExample layer_cost(const Conv2d& conv, const Shape& input, std::size_t index) {
  require_image(input, "conv2d", index);
  if (conv.in_channels < 1 || conv.out_channels < 1 || conv.kernel < 1 || input[2] != conv.in_channels)
    throw ValueError(fmt::format("CNN layer {} (conv2d {}->{} {}x{}): does not fit an input of shape {}",
                                 index, conv.in_channels, conv.out_channels, conv.kernel, conv.kernel,
                                 shape_str(input)));
  const Shape output{input[0], input[1], conv.out_channels};
  const auto window = conv.kernel * conv.kernel * conv.in_channels;
  return {"conv2d", output, window * conv.out_channels + conv.out_channels,
          static_cast<double>(num_elements(output)) * static_cast<double>(2 * window + 1)};
}

PerExample layer_cost(const Relu&, const Shape& input, std::size_t) {
  return {"relu", input, 0, static_cast<double>(num_elements(input))};
}

PerExample layer_cost(const MaxPool& pool, const Shape& input, std::size_t index) {
  require_image(input, "max_pool", index);
  if (pool.window < 1 || input[0] < pool.window || input[1] < pool.window)
    throw ValueError(fmt::format("CNN layer {} (max_pool {}x{}): does not fit an input of shape {}", index,
                                 pool.window, pool.window, shape_str(input)));
  const Shape output{input[0] / pool.window, input[1] / pool.window, input[2]};
  return {"max_pool", output, 0,
          static_cast<double>(num_elements(output)) * static_cast<double>(pool.window * pool.window - 1)};
}

PerExample layer_cost(const Flatten&, const Shape& input, std::size_t) {
  return {"flatten", {num_elements(input)}, 0, 0, /*new_buffer=*/false};
}

PerExample layer_cost(const Dense& dense, const Shape& input, std::size_t index) {
  if (dense.in_features < 1 || dense.out_features < 1 || input != Shape{dense.in_features})
    throw ValueError(fmt::format("CNN layer {} (dense {}->{}): does not fit an input of shape {}", index,
                                 dense.in_features, dense.out_features, shape_str(input)));
  return {"dense",
          {dense.out_features},
          dense.in_features * dense.out_features + dense.out_features,
          static_cast<double>(dense.out_features) * static_cast<double>(2 * dense.in_features + 1)};
}

}  // namespace

std::vector<CnnLayer> seeds_cnn(std::int64_t num_classes) {
  return {Conv2d{3, 32, 3}, Relu{},     MaxPool{2}, Conv2d{32, 64, 3},
          Relu{},           MaxPool{2}, Flatten{},  Dense{64 * 8 * 8, num_classes}};
}

Shape seeds_cnn_input() {
  return {32, 32, 3};
}

CnnCost cnn_cost(const std::vector<CnnLayer>& layers, const Shape& input, std::int64_t batch, DType dtype) {
  if (batch < 1) throw ValueError(fmt::format("CNN cost: the batch must be positive, got {}", batch));
  const double examples = static_cast<double>(batch);
  const double element_bytes = static_cast<double>(itemsize(dtype));
  CnnCost total;
  Shape shape = input;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    PerExample layer = std::visit([&](const auto& l) { return layer_cost(l, shape, i); }, layers[i]);
    const Bytes output_bytes =
        layer.new_buffer ? examples * static_cast<double>(num_elements(layer.output)) * element_bytes : 0;
    total.layers.push_back(
        {layer.kind, layer.output, layer.parameters, examples * layer.flops, output_bytes});
    total.parameters += layer.parameters;
    total.forward_flops += examples * layer.flops;
    total.activation_bytes += output_bytes;
    shape = layer.output;
  }
  total.parameter_bytes = static_cast<double>(total.parameters) * element_bytes;
  return total;
}

}  // namespace spmdsim::models
