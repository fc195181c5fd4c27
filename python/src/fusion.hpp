// XLA's fusion of a lowered program (docs/python.md, "Fusion"): which instructions of a per-device program
// run as one kernel, the way XLA's GPU compiler fuses them (xla/service/gpu/gpu_fusible.cc): elementwise
// ops, broadcasts, layout changes and reductions joined by their data into one kernel that reads its inputs
// once and writes only what is read after it, its intermediates never in device memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace spmdsim::python {

struct Instruction;  // program.hpp

// Instructions of one step that run together: as one kernel (spmdsim::fused) when `fused`, else each as its
// own op. In program order.
struct KernelGroup {
  std::vector<std::size_t> instructions;
  bool fused = false;
  std::string name;          // XLA's style: "loop_tanh_fusion", "input_reduce_sum_fusion"
  std::vector<int> inputs;   // the slots it reads that are defined before it
  std::vector<int> outputs;  // the slots it defines that are read after its step or kept, but views
  std::vector<std::size_t>
      views_after;                  // bitcasts run again after the kernel: views of its outputs or inputs
  std::vector<int> released_after;  // the slots nothing reads once this group has run
};

// A step of a program's run: one instruction that is not fusible, or a run of fusible instructions split
// into groups that do not read one another's results, so each can run whole in turn.
struct Step {
  std::vector<KernelGroup> groups;
};

// The steps of `instructions` in program order. `last_use[s]`: the last instruction reading slot s (or
// defining it, when nothing reads it), -1 for none; kKeptSlot for the program's outputs and constants.
inline constexpr int kKeptSlot = 1 << 30;
std::vector<Step> plan_steps(const std::vector<Instruction>& instructions, const std::vector<int>& last_use);

}  // namespace spmdsim::python
