#include "program.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "rule_support.hpp"
#include "simplify.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::python {

Axes pmap_axes(const std::vector<std::int64_t>& encoded) {
  std::vector<Axes> items;
  for (const auto a : encoded)
    items.emplace_back(a == kUnmapped ? Axes(none) : Axes(Axis(static_cast<int>(a))));
  return Axes::tuple(std::move(items));
}

int Program::add_input() {
  inputs_.push_back(num_slots_);
  return num_slots_++;
}

int Program::add_constant(Array value) {
  constants_.emplace_back(num_slots_, std::move(value));
  return num_slots_++;
}

int Program::add_slot() {
  return num_slots_++;
}

void Program::add(Instruction instruction) {
  instruction.rule = find_rule(instruction.primitive, instruction.where);
  instructions_.push_back(std::move(instruction));
}

void Program::set_outputs(std::vector<int> outputs) {
  outputs_ = std::move(outputs);
  std::vector<int> kept = outputs_;
  for (const auto& [slot, value] : constants_) kept.push_back(slot);
  fold_transposed_products(instructions_, kept);
  steps_ = plan_steps(instructions_, num_slots_, kept);
}

void Program::run_instruction(std::size_t n, std::vector<Array>& slots, std::vector<Array>& in) const {
  const auto& ins = instructions_[n];
  in.clear();
  for (int s : ins.inputs) in.push_back(slots[static_cast<std::size_t>(s)]);
  // A large result of real inputs in an abstract run: the rule gets abstract stand-ins, which cost the same
  // (rule_support.hpp). Control flow reads its inputs' values itself (a branch index, a loop's counter).
  // Inputs already abstract stay as they are, bound to their device buffers (a view keeps its base alive).
  if (ins.callees.empty() && std::any_of(ins.out_shapes.begin(), ins.out_shapes.end(), leaves_abstract))
    for (auto& a : in)
      if (!a.is_abstract()) a = Array::abstract(a.shape(), a.dtype());
  std::vector<Array> out;
  try {
    out = ins.rule(in, ins);
  } catch (const ValueError& e) {
    throw ValueError(fmt::format("{} (primitive '{}' at {})", e.what(), ins.primitive, ins.where));
  } catch (const TypeError& e) {
    throw TypeError(fmt::format("{} (primitive '{}' at {})", e.what(), ins.primitive, ins.where));
  }
  for (std::size_t i = 0; i < ins.outputs.size(); ++i) {
    Array value = std::move(out.at(i));
    // JAX's result type is the jaxpr's; an op of spmdsim's that promotes otherwise is cast to it.
    if (value.dtype() != ins.out_dtypes[i]) value = astype(value, ins.out_dtypes[i]);
    if (value.shape() != ins.out_shapes[i])
      throw ValueError(fmt::format("primitive '{}' at {}: spmdsim computed shape {} where JAX has {}",
                                   ins.primitive, ins.where, shape_str(value.shape()),
                                   shape_str(ins.out_shapes[i])));
    slots[static_cast<std::size_t>(ins.outputs[i])] = std::move(value);
  }
  in.clear();  // holds no value past its instruction, so that each is released after its last reader
}

std::vector<Array> Program::call(std::vector<Array> inputs) const {
  if (inputs.size() != inputs_.size())
    throw ValueError(fmt::format("a program of {} inputs called with {}", inputs_.size(), inputs.size()));
  std::vector<Array> slots(static_cast<std::size_t>(num_slots_));
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    slots[static_cast<std::size_t>(inputs_[i])] = std::move(inputs[i]);
  for (const auto& [slot, value] : constants_) slots[static_cast<std::size_t>(slot)] = value;
  const auto read = [&](const std::vector<int>& which) {
    std::vector<Array> values;
    values.reserve(which.size());
    for (int s : which) values.push_back(slots[static_cast<std::size_t>(s)]);
    return values;
  };
  std::vector<Array> in;  // an instruction's inputs, one vector for all of them
  for (const Step& step : steps_) {
    if (step.fused) {
      const auto results = fused(step.name, read(step.inputs), [&] {
        for (std::size_t n : step.instructions) run_instruction(n, slots, in);
        return read(step.outputs);
      });
      for (std::size_t i = 0; i < step.outputs.size(); ++i)
        slots[static_cast<std::size_t>(step.outputs[i])] = results[i];
      for (std::size_t n : step.views_after) run_instruction(n, slots, in);
    } else {
      for (std::size_t n : step.instructions) run_instruction(n, slots, in);
    }
    for (int s : step.released_after) slots[static_cast<std::size_t>(s)] = Array();
  }
  return read(outputs_);
}

Tree Program::run(Args args) const {
  std::vector<Array> inputs;
  for (std::size_t i = 0; i < args.size(); ++i) inputs.push_back(args.at(i).array());
  args.clear();
  std::vector<Tree> results;
  for (auto& value : call(std::move(inputs))) results.emplace_back(std::move(value));
  return Tree::tuple(std::move(results));
}

}  // namespace spmdsim::python
