// The rules of XLA's windowed operations, as JAX emits them for convolutions (lax.conv_general_dilated,
// flax's Conv) and pooling (max_pool, avg_pool: reduce_window_max / _min / _sum) and for their gradients (a
// convolution again, and select_and_scatter_add for a max pool's) (windowed.cpp).
#pragma once

#include "rule_support.hpp"

namespace spmdsim::python {

// groups: lhs_spec, rhs_spec, out_spec (dimension numbers: batch or output feature, feature or input feature,
// then the spatial dimensions), window_strides, padding low, padding high, lhs_dilation, rhs_dilation;
// ints: feature_group_count, batch_group_count.
Arrays conv_general_dilated_rule(const Arrays& in, const Instruction& ins);
// reduce_window_max, reduce_window_min, reduce_window_sum: the primitive's name says how a window reduces.
// groups: window_dimensions, window_strides, padding low, padding high, base_dilation, window_dilation.
Arrays reduce_window_rule(const Arrays& in, const Instruction& ins);
// in[0] the source (one value per window), in[1] the operand; each window's value is added at the element
// the selection picks (ints[0]: 1 for ge, the first maximum; 0 for le, the first minimum).
// groups: window_dimensions, window_strides, padding low, padding high.
Arrays select_and_scatter_add_rule(const Arrays& in, const Instruction& ins);

}  // namespace spmdsim::python
