// The rule of lax.sort: one operand (jnp.sort) or several sorted by the first num_keys of them (jnp.argsort
// sorts its operand with an iota, lexsort several keys) (sorting.cpp).
#pragma once

#include "rule_support.hpp"

namespace spmdsim::python {

Arrays sort_rule(const Arrays& in, const Instruction& ins);

}  // namespace spmdsim::python
