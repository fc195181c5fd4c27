#include "fusion.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_map>

#include "program.hpp"

namespace spmdsim::python {
namespace {

// What an instruction can be in a fused kernel, after XLA's IsUniversallyLoopFusible, IsLoopFusibleAsConsumer
// and IsProducerConsumerFusible (xla/service/gpu/gpu_fusible.cc).
enum class Role {
  none,     // its own kernel or no kernel: dot_general, collectives, control flow, gather, scatter, sort, ...
  bitcast,  // a new view of its operand, no kernel of its own (reshape, squeeze, copy)
  elementwise,  // reads every element of its operands once: arithmetic, comparisons, convert, broadcast, ...
  reduction,    // a reduction: its kernel's producers fuse into it, only bitcasts and converts after it
};

Role role_of(std::string_view primitive) {
  static const std::unordered_map<std::string_view, Role> roles = [] {
    std::unordered_map<std::string_view, Role> table;
    for (std::string_view p :
         {"reshape", "squeeze", "expand_dims", "copy", "copy_p", "reduce_precision", "stop_gradient"})
      table.emplace(p, Role::bitcast);
    for (std::string_view p : {"add",
                               "add_any",
                               "sub",
                               "mul",
                               "div",
                               "rem",
                               "max",
                               "min",
                               "pow",
                               "atan2",
                               "neg",
                               "abs",
                               "exp",
                               "log",
                               "tanh",
                               "sqrt",
                               "square",
                               "rsqrt",
                               "logistic",
                               "sign",
                               "is_finite",
                               "exp2",
                               "log1p",
                               "expm1",
                               "sin",
                               "cos",
                               "tan",
                               "erf",
                               "erf_inv",
                               "cbrt",
                               "floor",
                               "ceil",
                               "round",
                               "integer_pow",
                               "eq",
                               "ne",
                               "lt",
                               "le",
                               "gt",
                               "ge",
                               "not",
                               "and",
                               "or",
                               "xor",
                               "select_n",
                               "clamp",
                               "iota",
                               "convert_element_type",
                               "broadcast_in_dim",
                               "transpose",
                               "rev",
                               "concatenate",
                               "pad"})
      table.emplace(p, Role::elementwise);
    for (std::string_view p : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                               "reduce_or", "argmax", "argmin"})
      table.emplace(p, Role::reduction);
    return table;
  }();
  const auto it = roles.find(primitive);
  return it == roles.end() ? Role::none : it->second;
}

// XLA fuses only these after a reduction (IsReduceIntermediate): they add no work to its epilogue.
bool continues_reduction(const Instruction& ins) {
  return ins.inputs.size() == 1 &&
         (role_of(ins.primitive) == Role::bitcast || ins.primitive == "convert_element_type");
}

bool reads_any(const Instruction& ins, const std::set<int>& slots) {
  return std::any_of(ins.inputs.begin(), ins.inputs.end(), [&](int s) { return slots.count(s) > 0; });
}

// The end of the run of fusible instructions that starts at `begin`: it stops before an instruction that is
// not fusible, or that reads a reduction's result of the run other than through a bitcast or convert.
std::size_t run_end(const std::vector<Instruction>& instructions, std::size_t begin) {
  std::set<int> reduced;  // slots holding a reduction's result, or a bitcast or convert of one
  std::size_t end = begin;
  for (; end < instructions.size(); ++end) {
    const Instruction& ins = instructions[end];
    const Role role = role_of(ins.primitive);
    if (role == Role::none) break;
    const bool after_reduction = reads_any(ins, reduced);
    if (after_reduction && !continues_reduction(ins)) break;
    if (role == Role::reduction || after_reduction) reduced.insert(ins.outputs.begin(), ins.outputs.end());
  }
  return std::max(end, begin + 1);
}

// The run [begin, end) split into groups of instructions joined by their data, in order of their first
// instruction: no group reads another's results, so each can run whole in turn.
std::vector<KernelGroup> connected_groups(const std::vector<Instruction>& instructions, std::size_t begin,
                                          std::size_t end) {
  std::vector<std::size_t> parent(end - begin);
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::unordered_map<int, std::size_t> defined_at;  // slot -> instruction of the run, relative to begin
  for (std::size_t i = begin; i < end; ++i) {
    for (int s : instructions[i].inputs)
      if (const auto it = defined_at.find(s); it != defined_at.end())
        parent[root(i - begin)] = root(it->second);
    for (int s : instructions[i].outputs) defined_at[s] = i - begin;
  }
  std::vector<KernelGroup> groups;
  std::map<std::size_t, std::size_t> group_of_root;
  for (std::size_t i = begin; i < end; ++i) {
    const auto [it, added] = group_of_root.emplace(root(i - begin), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].instructions.push_back(i);
  }
  return groups;
}

// Fills in how `group` runs: fused when it holds two or more instructions that are kernels of their own, its
// inputs, its outputs (the slots it defines that are read after the run [.., end) or kept) and the bitcasts
// that make some of them.
void describe(KernelGroup& group, const std::vector<Instruction>& instructions, std::size_t end,
              const std::vector<int>& last_use) {
  const auto is_bitcast = [&](std::size_t i) { return role_of(instructions[i].primitive) == Role::bitcast; };
  group.fused = std::count_if(group.instructions.begin(), group.instructions.end(),
                              [&](std::size_t i) { return !is_bitcast(i); }) >= 2;
  if (!group.fused) return;
  std::map<int, std::size_t> defined_by;
  const Instruction* hero = &instructions[group.instructions.back()];  // what XLA names the fusion after
  bool reduces = false;
  for (std::size_t i : group.instructions) {
    const Instruction& ins = instructions[i];
    for (int s : ins.inputs)
      if (defined_by.count(s) == 0 &&
          std::find(group.inputs.begin(), group.inputs.end(), s) == group.inputs.end())
        group.inputs.push_back(s);
    for (int s : ins.outputs) defined_by[s] = i;
    if (role_of(ins.primitive) == Role::reduction) {
      reduces = true;
      hero = &ins;
    }
  }
  group.name = (reduces ? "input_" : "loop_") + hero->primitive + "_fusion";
  // A bitcast's result that leaves the kernel is a view of what it bitcasts: that is the output (or, for a
  // view of an input, nothing is), and the bitcast runs again after the kernel to make the view.
  std::set<int> outputs;
  std::set<std::size_t> views;
  for (const auto& [slot, i] : defined_by) {
    if (last_use[static_cast<std::size_t>(slot)] < static_cast<int>(end)) continue;
    int s = slot;
    std::size_t at = i;
    while (is_bitcast(at)) {
      views.insert(at);
      s = instructions[at].inputs.front();
      const auto it = defined_by.find(s);
      if (it == defined_by.end()) break;
      at = it->second;
    }
    if (!is_bitcast(at)) outputs.insert(s);
  }
  group.outputs.assign(outputs.begin(), outputs.end());
  group.views_after.assign(views.begin(), views.end());
}

// Each slot whose last use falls in the run [begin, end) is released after the last group that touches it.
void plan_releases(std::vector<KernelGroup>& groups, const std::vector<Instruction>& instructions,
                   std::size_t begin, std::size_t end, const std::vector<int>& last_use) {
  std::map<int, std::size_t> released_by;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i : groups[g].instructions)
      for (const auto* slots : {&instructions[i].inputs, &instructions[i].outputs})
        for (int s : *slots) {
          const int last = last_use[static_cast<std::size_t>(s)];
          if (last >= static_cast<int>(begin) && last < static_cast<int>(end)) released_by[s] = g;
        }
  for (const auto& [slot, g] : released_by) groups[g].released_after.push_back(slot);
}

}  // namespace

std::vector<Step> plan_steps(const std::vector<Instruction>& instructions, const std::vector<int>& last_use) {
  std::vector<Step> steps;
  for (std::size_t begin = 0; begin < instructions.size();) {
    const std::size_t end = run_end(instructions, begin);
    Step step{connected_groups(instructions, begin, end)};
    for (auto& group : step.groups) describe(group, instructions, end, last_use);
    plan_releases(step.groups, instructions, begin, end, last_use);
    steps.push_back(std::move(step));
    begin = end;
  }
  return steps;
}

}  // namespace spmdsim::python
