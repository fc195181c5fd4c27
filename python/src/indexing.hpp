// The rules of XLA's gather and scatter as JAX emits them for array indexing: x[idx], x[:, idx],
// take_along_axis, x.at[idx].set / add / mul / min / max, and embedding lookups and their gradients
// (indexing.cpp).
#pragma once

#include "rule_support.hpp"

namespace spmdsim::python {

Arrays gather_rule(const Arrays& in, const Instruction& ins);
// scatter, scatter-add, scatter-mul, scatter-min, scatter-max: the primitive's name says how an update
// combines with the operand's element.
Arrays scatter_rule(const Arrays& in, const Instruction& ins);

}  // namespace spmdsim::python
