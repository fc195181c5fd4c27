// The rules of JAX's control-flow primitives (cond, while, scan): each runs its instruction's callee programs
// on the calling device (control_flow.cpp).
#pragma once

#include "rule_support.hpp"

namespace spmdsim::python {

Arrays cond_rule(const Arrays& in, const Instruction& ins);
Arrays while_rule(const Arrays& in, const Instruction& ins);
Arrays scan_rule(const Arrays& in, const Instruction& ins);

}  // namespace spmdsim::python
