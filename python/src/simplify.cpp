#include "simplify.hpp"

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "program.hpp"
#include "rule_support.hpp"

namespace spmdsim::python {
namespace {

// Batch dimensions equal and leading in both operands, each operand with one free dimension.
bool canonical_product(const Instruction& dot) {
  const auto &lhs_contract = dot.ints, &rhs_contract = dot.ints2;
  const auto &lhs_batch = dot.groups.at(0), &rhs_batch = dot.groups.at(1);
  if (dot.in_shapes.size() != 2) return false;
  const auto rank = [&](std::size_t operand) { return dot.in_shapes[operand].size(); };
  return lhs_batch == rhs_batch && is_identity(lhs_batch) && !lhs_contract.empty() && !rhs_contract.empty() &&
         lhs_contract.size() + lhs_batch.size() + 1 == rank(0) &&
         rhs_contract.size() + rhs_batch.size() + 1 == rank(1);
}

// Whether `permutation` swaps the last two dimensions and keeps the others in place.
bool swaps_last_two(const std::vector<std::int64_t>& permutation) {
  std::vector<std::int64_t> expected(permutation.size());
  std::iota(expected.begin(), expected.end(), 0);
  if (expected.size() < 2) return false;
  std::swap(expected.rbegin()[0], expected.rbegin()[1]);
  return permutation == expected;
}

}  // namespace

void fold_transposed_products(std::vector<Instruction>& instructions, const std::vector<int>& kept) {
  std::unordered_map<int, int> readers;
  std::unordered_map<int, std::size_t> producer;
  for (int slot : kept) ++readers[slot];
  for (std::size_t n = 0; n < instructions.size(); ++n) {
    for (int slot : instructions[n].inputs) ++readers[slot];
    for (int slot : instructions[n].outputs) producer[slot] = n;
  }
  std::vector<bool> folded(instructions.size(), false);
  for (auto& transpose : instructions) {
    if (transpose.primitive != "transpose" || !swaps_last_two(transpose.ints)) continue;
    const int product = transpose.inputs.at(0);
    const auto made = producer.find(product);
    if (made == producer.end() || readers[product] != 1) continue;
    Instruction& dot = instructions[made->second];
    if (dot.primitive != "dot_general" || !canonical_product(dot)) continue;
    std::swap(dot.inputs[0], dot.inputs[1]);
    std::swap(dot.in_shapes[0], dot.in_shapes[1]);
    std::swap(dot.ints, dot.ints2);
    dot.outputs = transpose.outputs;
    dot.out_shapes = transpose.out_shapes;
    folded[static_cast<std::size_t>(&transpose - instructions.data())] = true;
  }
  std::size_t n = 0;
  std::erase_if(instructions, [&](const Instruction&) { return folded[n++]; });
}

}  // namespace spmdsim::python
