// A JAX per-device program lowered for spmdsim (docs/python.md): the equations of pmap's call_jaxpr as a flat
// list of instructions over numbered value slots, each bound at lowering time to the rule that runs its
// primitive on spmdsim's ops and collectives. The per-device function of pmap runs it without Python: SimGrid
// switches between the devices' actors on one thread, which Python's interpreter cannot follow.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fusion.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/pmap.hpp"

namespace spmdsim::python {

struct Instruction;
class Program;
// Runs one primitive on the calling device: its input values to its output values.
using Rule = std::vector<Array> (*)(const std::vector<Array>& inputs, const Instruction& instruction);

struct Instruction {
  std::string primitive;  // JAX's name ("dot_general")
  std::string where;      // the user's source line, for errors ("train.py:12 (loss)")
  Rule rule = nullptr;
  std::vector<int> inputs, outputs;  // slots
  std::vector<Shape> in_shapes, out_shapes;
  std::vector<DType> out_dtypes;
  // The primitive's parameters, in the order its rule reads them (python/spmdsim/lowering.py writes them).
  std::vector<std::int64_t> ints, ints2;
  std::vector<std::vector<std::int64_t>> groups;  // axis_index_groups, ppermute's pairs, per-dimension lists
  double number = 0;
  std::vector<std::string> axis_names;  // a collective's axis names, or a nested pmap's axis name
  // The programs a call-like primitive runs (cond's branches, while's condition and body, scan's body, a
  // nested pmap's program), each called by the primitive's rule.
  std::vector<std::shared_ptr<const Program>> callees;
};

// pmap's in_axes or out_axes as python/spmdsim/lowering.py encodes them: one int per argument or result, with
// kUnmapped for None (a jaxpr's axes are otherwise non-negative).
inline constexpr std::int64_t kUnmapped = -1;
Axes pmap_axes(const std::vector<std::int64_t>& encoded);

// The rule of `primitive`; throws ValueError naming the primitive, `where` it is and the primitives spmdsim
// runs.
Rule find_rule(const std::string& primitive, const std::string& where);
std::vector<std::string> rule_names();

class Program {
 public:
  int add_input();
  int add_constant(Array value);  // a literal or a closed-over constant, the same on every device
  int add_slot();
  void add(Instruction instruction);
  // The program's results; also plans how it runs: XLA's simplifications that remove kernels (simplify.hpp),
  // which instructions run fused as one kernel, as XLA fuses them (fusion.hpp), and when each slot is
  // released (after its last reader), as XLA frees a buffer once nothing reads it, so that a device's memory
  // peak is the program's, not the sum of its values.
  void set_outputs(std::vector<int> outputs);
  std::size_t size() const { return instructions_.size(); }

  // Runs the program on the calling device: its inputs in order to its outputs in order.
  std::vector<Array> call(std::vector<Array> inputs) const;
  // One device's run as pmap's per-device function: `args` are the program's inputs; returns a tuple. Lets go
  // of `args` before it runs, so that a donated argument is released after its last use.
  Tree run(Args args) const;

 private:
  int num_slots_ = 0;
  std::vector<int> inputs_;
  std::vector<std::pair<int, Array>> constants_;
  std::vector<Instruction> instructions_;
  std::vector<int> outputs_;
  std::vector<Step> steps_;

  // Runs instruction n on the calling device, reading and writing `slots`; `in` is scratch for its inputs.
  void run_instruction(std::size_t n, std::vector<Array>& slots, std::vector<Array>& in) const;
};

}  // namespace spmdsim::python
