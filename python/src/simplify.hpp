// Rewrites of a lowered program that XLA's algebraic simplifier makes before fusion and that change what a
// device runs: each one removes a kernel, so leaving it out would charge work the compiled program never does.
#pragma once

#include <vector>

namespace spmdsim::python {

struct Instruction;

// transpose(dot_general(a, b)) as dot_general(b, a) with the contracting dimensions swapped, writing the
// transpose's result directly (jax.grad writes a weight's gradient as a product then a transpose). XLA's
// AlgebraicSimplifier::HandleTranspose (xla/service/algebraic_simplifier.cc) does it when nothing else reads
// the product, both operands have the same batch dimensions, leading, and one free dimension each, and the
// transpose swaps the last two dimensions. `kept`: the slots read after the program (its results).
void fold_transposed_products(std::vector<Instruction>& instructions, const std::vector<int>& kept);

}  // namespace spmdsim::python
