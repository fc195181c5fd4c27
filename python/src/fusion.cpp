#include "fusion.hpp"

#include <algorithm>
#include <map>
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
    // clang-format off
    for (std::string_view p :
         {"add", "add_any", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "neg", "abs", "exp",
          "log", "tanh", "sqrt", "square", "rsqrt", "logistic", "sign", "is_finite", "exp2", "log1p", "expm1",
          "sin", "cos", "tan", "erf", "erf_inv", "cbrt", "floor", "ceil", "round", "integer_pow", "eq", "ne",
          "lt", "le", "gt", "ge", "not", "and", "or", "xor", "select_n", "clamp", "iota", "convert_element_type",
          "broadcast_in_dim", "transpose", "rev", "concatenate", "pad"})
      table.emplace(p, Role::elementwise);
    // clang-format on
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

// A kernel being built: its instructions, whether anything outside it has read its values (then nothing may
// join it: it must run before that reader), and which of its slots hold a reduction's result.
struct Building {
  std::vector<std::size_t> members;
  bool closed = false;
  std::set<int> reduced;
};

// Groups the fusible instructions by their data, in program order: an instruction joins the open kernels of
// the values it reads (merging them) unless it reads a reduction's result other than through a bitcast or
// convert; every kernel it reads from without joining is closed. Returns each instruction's kernel, -1 for
// an instruction that is not fusible.
std::vector<int> kernels_of(const std::vector<Instruction>& instructions, std::vector<Building>& kernels) {
  std::vector<int> kernel_of(instructions.size(), -1);
  std::unordered_map<int, int> defined_in;  // slot -> kernel
  std::vector<int> merged_into;             // kernel -> the kernel it was merged into, or itself
  const auto root = [&](int k) {
    while (merged_into[static_cast<std::size_t>(k)] != k) k = merged_into[static_cast<std::size_t>(k)];
    return k;
  };
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& ins = instructions[i];
    std::set<int> producers;  // the kernels of the values it reads
    for (int s : ins.inputs)
      if (const auto it = defined_in.find(s); it != defined_in.end()) producers.insert(root(it->second));
    if (role_of(ins.primitive) == Role::none) {
      for (int k : producers) kernels[static_cast<std::size_t>(k)].closed = true;
      continue;
    }
    std::set<int> joined;
    bool after_reduction = false;
    for (int k : producers) {
      const Building& kernel = kernels[static_cast<std::size_t>(k)];
      const bool reads_reduced = std::any_of(ins.inputs.begin(), ins.inputs.end(),
                                             [&](int s) { return kernel.reduced.count(s) > 0; });
      if (!kernel.closed && (!reads_reduced || continues_reduction(ins))) {
        joined.insert(k);
        after_reduction = after_reduction || reads_reduced;
      }
    }
    for (int k : producers)
      if (joined.count(k) == 0) kernels[static_cast<std::size_t>(k)].closed = true;
    int into;
    if (joined.empty()) {
      into = static_cast<int>(kernels.size());
      kernels.emplace_back();
      merged_into.push_back(into);
    } else {
      into = *joined.begin();
      for (int k : joined) {
        if (k == into) continue;
        Building& other = kernels[static_cast<std::size_t>(k)];
        Building& kept = kernels[static_cast<std::size_t>(into)];
        kept.members.insert(kept.members.end(), other.members.begin(), other.members.end());
        kept.reduced.insert(other.reduced.begin(), other.reduced.end());
        other = Building{};
        merged_into[static_cast<std::size_t>(k)] = into;
      }
    }
    Building& kernel = kernels[static_cast<std::size_t>(into)];
    kernel.members.push_back(i);
    if (role_of(ins.primitive) == Role::reduction || after_reduction)
      kernel.reduced.insert(ins.outputs.begin(), ins.outputs.end());
    for (int s : ins.outputs) defined_in[s] = into;
  }
  for (std::size_t k = 0; k < kernels.size(); ++k)
    for (std::size_t i : kernels[k].members) kernel_of[i] = static_cast<int>(k);
  return kernel_of;
}

// Fills in how a kernel's step runs: fused when it holds two or more instructions that are kernels of their
// own, its inputs, its outputs (`leaves`: the slots read outside it or kept) and the bitcasts that make some
// of them.
void describe(Step& step, const std::vector<Instruction>& instructions, const std::set<int>& leaves) {
  const auto is_bitcast = [&](std::size_t i) { return role_of(instructions[i].primitive) == Role::bitcast; };
  std::sort(step.instructions.begin(), step.instructions.end());
  step.fused = std::count_if(step.instructions.begin(), step.instructions.end(),
                             [&](std::size_t i) { return !is_bitcast(i); }) >= 2;
  if (!step.fused) return;
  std::map<int, std::size_t> defined_by;
  const Instruction* hero = &instructions[step.instructions.back()];  // what XLA names the fusion after
  bool reduces = false;
  for (std::size_t i : step.instructions) {
    const Instruction& ins = instructions[i];
    for (int s : ins.inputs)
      if (defined_by.count(s) == 0 &&
          std::find(step.inputs.begin(), step.inputs.end(), s) == step.inputs.end())
        step.inputs.push_back(s);
    for (int s : ins.outputs) defined_by[s] = i;
    if (role_of(ins.primitive) == Role::reduction) {
      reduces = true;
      hero = &ins;
    }
  }
  step.name = (reduces ? "input_" : "loop_") + hero->primitive + "_fusion";
  // A bitcast's result that leaves the kernel is a view of what it bitcasts: that is the output (or, for a
  // view of an input, nothing is), and the bitcast runs again after the kernel to make the view.
  std::set<int> outputs;
  std::set<std::size_t> views;
  for (const auto& [slot, i] : defined_by) {
    if (leaves.count(slot) == 0) continue;
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
  step.outputs.assign(outputs.begin(), outputs.end());
  step.views_after.assign(views.begin(), views.end());
}

}  // namespace

std::vector<Step> plan_steps(const std::vector<Instruction>& instructions, int num_slots,
                             const std::vector<int>& kept) {
  std::vector<Building> kernels;
  const std::vector<int> kernel_of = kernels_of(instructions, kernels);
  // Each step at the place of its last instruction.
  std::map<std::size_t, Step> by_place;
  std::vector<std::size_t> place_of(instructions.size());
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    if (kernel_of[i] < 0) {
      by_place[i].instructions = {i};
      place_of[i] = i;
      continue;
    }
    // An instruction joins a kernel as its latest member, after every member merged before it: the last
    // member is the latest.
    const auto& members = kernels[static_cast<std::size_t>(kernel_of[i])].members;
    place_of[i] = members.back();
    if (place_of[i] == i) by_place[i].instructions = members;
  }
  // A kernel's leaving values: read by an instruction of another step, or kept.
  std::set<int> leaves(kept.begin(), kept.end());
  std::vector<int> defined_at(static_cast<std::size_t>(num_slots), -1);
  for (std::size_t i = 0; i < instructions.size(); ++i)
    for (int s : instructions[i].outputs) defined_at[static_cast<std::size_t>(s)] = static_cast<int>(i);
  for (std::size_t i = 0; i < instructions.size(); ++i)
    for (int s : instructions[i].inputs) {
      const int d = defined_at[static_cast<std::size_t>(s)];
      if (d >= 0 && place_of[static_cast<std::size_t>(d)] != place_of[i]) leaves.insert(s);
    }
  std::vector<Step> steps;
  std::unordered_map<std::size_t, std::size_t> step_at;  // place -> step index
  for (auto& [place, step] : by_place) {
    describe(step, instructions, leaves);
    step_at[place] = steps.size();
    steps.push_back(std::move(step));
  }
  // Each slot is released after the last step that reads or defines it, unless kept.
  std::vector<int> last_step(static_cast<std::size_t>(num_slots), -1);
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const int step = static_cast<int>(step_at[place_of[i]]);
    for (const auto* slots : {&instructions[i].inputs, &instructions[i].outputs})
      for (int s : *slots)
        last_step[static_cast<std::size_t>(s)] = std::max(last_step[static_cast<std::size_t>(s)], step);
  }
  const std::set<int> never(kept.begin(), kept.end());
  for (int s = 0; s < num_slots; ++s)
    if (last_step[static_cast<std::size_t>(s)] >= 0 && never.count(s) == 0)
      steps[static_cast<std::size_t>(last_step[static_cast<std::size_t>(s)])].released_after.push_back(s);
  return steps;
}

}  // namespace spmdsim::python
