// XLA's fusion of a lowered program (docs/python.md, "Fusion"): which instructions of a per-device program
// run as one kernel, the way XLA's GPU compiler fuses them (xla/service/gpu/gpu_fusible.cc): elementwise
// ops, broadcasts, layout changes and reductions joined by their data into one kernel that reads its inputs
// once and writes only what is read outside it, its intermediates never in device memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace spmdsim::python {

struct Instruction;  // program.hpp

// One step of a program's run: an instruction that is not fused, or the instructions of one kernel, which
// run at the place of the last of them (every value they read is made by then, and nothing outside the
// kernel reads theirs before).
struct Step {
  std::vector<std::size_t> instructions;  // in program order
  bool fused = false;                     // run as one kernel (spmdsim::fused), else each as its own op
  std::string name;                       // XLA's style: "loop_tanh_fusion", "input_reduce_sum_fusion"
  std::vector<int> inputs;                // the slots the kernel reads that it does not define
  std::vector<int> outputs;               // the slots it defines that are read outside it or kept, but views
  std::vector<std::size_t> views_after;   // bitcasts run again after the kernel: views of its results
  std::vector<int> released_after;        // the slots nothing reads once this step has run
};

// The steps of `instructions` in the order they run. `kept`: the slots never released (the program's results
// and constants).
std::vector<Step> plan_steps(const std::vector<Instruction>& instructions, int num_slots,
                             const std::vector<int>& kept);

}  // namespace spmdsim::python
