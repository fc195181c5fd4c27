// Convolution and pooling with XLA's semantics: a window slides over the operand with its strides, over low
// and high padding, with holes between operand elements (base or lhs dilation, a transposed convolution's)
// and between window elements (window or rhs dilation, an atrous convolution's). Values are computed here in
// double precision, rounded to JAX's result type and charged through custom_op: a convolution its
// 2 * outputs * input features per group * kernel elements FLOPs (2 N Ho Wo Co Ci Kh Kw in 2-D) at the matrix
// units' rate, a reduction one FLOP per window element read.
#include "windowed.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace spmdsim::python {
namespace {

// One dimension of a window sliding over a padded, dilated operand.
struct WindowDimension {
  std::int64_t operand_size, stride, padding_low, base_dilation, window_dilation;

  // The operand index that window element k of output index y reads, or none where it falls on padding or on
  // a hole of the base dilation.
  std::optional<std::int64_t> operand_index(std::int64_t y, std::int64_t k) const {
    const std::int64_t at = y * stride + k * window_dilation - padding_low;
    if (at < 0 || at % base_dilation != 0 || at / base_dilation >= operand_size) return std::nullopt;
    return at / base_dilation;
  }
};

// Calls visit(offset, window_offset) for each element of the window at output position `out` that lies on the
// operand, in row-major window order (XLA's): `offset` is the element's flat offset over the windowed
// dimensions (operand index times `operand_strides`), `window_offset` its window index times
// `element_strides` (where a convolution's kernel holds its weight).
template <class Visit>
void for_each_in_window(const std::vector<WindowDimension>& dims, const std::vector<std::int64_t>& out,
                        const Shape& window, const std::vector<std::int64_t>& operand_strides,
                        const std::vector<std::int64_t>& element_strides, Visit visit) {
  for (std::int64_t k = 0; k < num_elements(window); ++k) {
    const auto element = index_of(k, window);
    std::int64_t offset = 0, window_offset = 0;
    bool on_operand = true;
    for (std::size_t d = 0; d < dims.size() && on_operand; ++d) {
      const auto index = dims[d].operand_index(out[d], element[d]);
      on_operand = index.has_value();
      if (on_operand) offset += *index * operand_strides[d];
      window_offset += element[d] * element_strides[d];
    }
    if (on_operand) visit(offset, window_offset);
  }
}

// values[dims[i]] for i from `from` on: a dimension-numbers spec's sizes or strides, in the spec's order.
template <class Values>
Values picked(const Values& values, const std::vector<std::int64_t>& dims, std::size_t from = 0) {
  Values out;
  for (std::size_t i = from; i < dims.size(); ++i) out.push_back(values[static_cast<std::size_t>(dims[i])]);
  return out;
}

// A reduce_window or select_and_scatter window over every dimension of `operand` (groups as the header says).
std::vector<WindowDimension> window_over(const Shape& operand, const Instruction& ins) {
  const auto& g = ins.groups;
  std::vector<WindowDimension> dims;
  for (std::size_t d = 0; d < operand.size(); ++d)
    dims.push_back({.operand_size = operand[d],
                    .stride = g.at(1)[d],
                    .padding_low = g.at(2)[d],
                    .base_dilation = g.size() > 4 ? g[4][d] : 1,
                    .window_dilation = g.size() > 5 ? g[5][d] : 1});
  return dims;
}

}  // namespace

Arrays conv_general_dilated_rule(const Arrays& in, const Instruction& ins) {
  const auto& g = ins.groups;
  const auto &lhs_spec = g.at(0), &rhs_spec = g.at(1), &out_spec = g.at(2);
  const Shape &lhs_shape = in[0].shape(), &rhs_shape = in[1].shape(), &out_shape = ins.out_shapes[0];
  const auto lhs_strides = strides_of(lhs_shape), rhs_strides = strides_of(rhs_shape),
             out_strides = strides_of(out_shape);
  const std::int64_t batch = out_shape[static_cast<std::size_t>(out_spec[0])];
  const std::int64_t out_features = out_shape[static_cast<std::size_t>(out_spec[1])];
  const std::int64_t group_features = rhs_shape[static_cast<std::size_t>(rhs_spec[1])];  // per group
  // The output features are split into groups (one of the two counts is 1, as XLA requires): each feature
  // group reads its slice of the input features, each batch group its slice of the input batch (JAX's
  // kernel gradient of a grouped convolution).
  const std::int64_t feature_groups = ins.ints.at(0), batch_groups = ins.ints.at(1);
  const std::int64_t out_features_per_group = out_features / (feature_groups * batch_groups);
  const Shape out_spatial = picked(out_shape, out_spec, 2), kernel = picked(rhs_shape, rhs_spec, 2);
  const auto lhs_spatial_strides = picked(lhs_strides, lhs_spec, 2),
             rhs_spatial_strides = picked(rhs_strides, rhs_spec, 2),
             out_spatial_strides = picked(out_strides, out_spec, 2);
  std::vector<WindowDimension> dims;
  for (std::size_t d = 0; d < out_spatial.size(); ++d)
    dims.push_back({.operand_size = lhs_shape[static_cast<std::size_t>(lhs_spec[2 + d])],
                    .stride = g.at(3)[d],
                    .padding_low = g.at(4)[d],
                    .base_dilation = g.at(6)[d],
                    .window_dilation = g.at(7)[d]});
  const auto lhs_batch_stride = lhs_strides[static_cast<std::size_t>(lhs_spec[0])],
             lhs_feature_stride = lhs_strides[static_cast<std::size_t>(lhs_spec[1])],
             rhs_out_stride = rhs_strides[static_cast<std::size_t>(rhs_spec[0])],
             rhs_in_stride = rhs_strides[static_cast<std::size_t>(rhs_spec[1])],
             out_batch_stride = out_strides[static_cast<std::size_t>(out_spec[0])],
             out_feature_stride = out_strides[static_cast<std::size_t>(out_spec[1])];
  // Charged as the implicit GEMM it runs as on the matrix units (cuDNN's, XLA's on TPU): per group, the
  // output positions by the group's output features, contracting its input features times the kernel.
  const MatmulShape gemm{.batch = feature_groups * batch_groups,
                         .m = num_elements(out_shape) / out_features,
                         .n = out_features_per_group,
                         .k = group_features * num_elements(kernel)};
  const OpCost cost{.flops = 2.0 * static_cast<double>(gemm.batch * gemm.m * gemm.n * gemm.k),
                    .bytes = bytes_of(in) + bytes_written(ins),
                    .matmul = gemm};
  return {charged(ins, in, cost, [&] {
    const auto lhs = in[0].to_doubles(), rhs = in[1].to_doubles();
    std::vector<double> out(static_cast<std::size_t>(num_elements(out_shape)));
    std::vector<double> sums(static_cast<std::size_t>(out_features));
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t p = 0; p < num_elements(out_spatial); ++p) {
        const auto position = index_of(p, out_spatial);
        std::fill(sums.begin(), sums.end(), 0.0);
        for_each_in_window(dims, position, kernel, lhs_spatial_strides, rhs_spatial_strides,
                           [&](std::int64_t lhs_offset, std::int64_t rhs_offset) {
                             for (std::int64_t o = 0; o < out_features; ++o) {
                               const std::int64_t group = o / out_features_per_group;
                               const std::int64_t input_batch = batch_groups > 1 ? group * batch + n : n;
                               const std::int64_t first_feature =
                                   feature_groups > 1 ? group * group_features : 0;
                               const std::int64_t l = input_batch * lhs_batch_stride + lhs_offset +
                                                      first_feature * lhs_feature_stride;
                               const std::int64_t r = rhs_offset + o * rhs_out_stride;
                               double sum = 0;
                               for (std::int64_t c = 0; c < group_features; ++c)
                                 sum += lhs[static_cast<std::size_t>(l + c * lhs_feature_stride)] *
                                        rhs[static_cast<std::size_t>(r + c * rhs_in_stride)];
                               sums[static_cast<std::size_t>(o)] += sum;
                             }
                           });
        std::int64_t at = n * out_batch_stride;
        for (std::size_t d = 0; d < position.size(); ++d) at += position[d] * out_spatial_strides[d];
        for (std::int64_t o = 0; o < out_features; ++o)
          out[static_cast<std::size_t>(at + o * out_feature_stride)] = sums[static_cast<std::size_t>(o)];
      }
    }
    return out;
  })};
}

Arrays reduce_window_rule(const Arrays& in, const Instruction& ins) {
  const Shape& shape = in[0].shape();
  const Shape& out_shape = ins.out_shapes[0];
  const Shape window(ins.groups.at(0).begin(), ins.groups.at(0).end());
  const bool sum = ins.primitive == "reduce_window_sum", max = ins.primitive == "reduce_window_max";
  const double init = sum   ? 0.0
                      : max ? -std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::infinity();
  const double flops =
      static_cast<double>(num_elements(out_shape)) * static_cast<double>(num_elements(window));
  return {charged(ins, in, flops, [&] {
    const auto values = in[0].to_doubles();
    const auto dims = window_over(shape, ins);
    const auto strides = strides_of(shape), element_strides = strides_of(window);
    std::vector<double> out(static_cast<std::size_t>(num_elements(out_shape)), init);
    for (std::int64_t e = 0; e < num_elements(out_shape); ++e) {
      double& result = out[static_cast<std::size_t>(e)];
      for_each_in_window(dims, index_of(e, out_shape), window, strides, element_strides,
                         [&](std::int64_t offset, std::int64_t) {
                           const double x = values[static_cast<std::size_t>(offset)];
                           result = sum ? result + x : max ? std::max(result, x) : std::min(result, x);
                         });
    }
    return out;
  })};
}

Arrays select_and_scatter_add_rule(const Arrays& in, const Instruction& ins) {
  const Shape &source_shape = in[0].shape(), &shape = in[1].shape();
  const Shape window(ins.groups.at(0).begin(), ins.groups.at(0).end());
  const bool first_maximum = ins.ints.at(0) == 1;
  const double flops =
      static_cast<double>(num_elements(source_shape)) * static_cast<double>(num_elements(window) + 1);
  return {charged(ins, in, flops, [&] {
    const auto source = in[0].to_doubles(), operand = in[1].to_doubles();
    const auto dims = window_over(shape, ins);
    const auto strides = strides_of(shape), element_strides = strides_of(window);
    std::vector<double> out(operand.size(), 0.0);
    for (std::int64_t e = 0; e < num_elements(source_shape); ++e) {
      std::optional<std::int64_t> selected;
      for_each_in_window(dims, index_of(e, source_shape), window, strides, element_strides,
                         [&](std::int64_t offset, std::int64_t) {
                           const double best = selected ? operand[static_cast<std::size_t>(*selected)] : 0;
                           const double x = operand[static_cast<std::size_t>(offset)];
                           // XLA keeps the selected element while select(selected, candidate) holds.
                           const bool keep = selected && (first_maximum ? best >= x : best <= x);
                           if (!keep) selected = offset;
                         });
      if (selected) out[static_cast<std::size_t>(*selected)] += source[static_cast<std::size_t>(e)];
    }
    return out;
  })};
}

}  // namespace spmdsim::python
