// What the rules of every primitive family share (primitives.cpp, control_flow.cpp, indexing.cpp,
// sorting.cpp): values computed here charged through custom_op, and row-major index arithmetic.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "program.hpp"
#include "spmdsim/device_spec.hpp"

namespace spmdsim::python {

using Arrays = std::vector<Array>;

double bytes_of(const Arrays& arrays);
bool any_abstract(const Arrays& arrays);

// `values` (or an abstract array when an input is abstract) as the instruction's output `i`, charged `cost`.
Array charged(const Instruction& ins, const Arrays& in, const OpCost& cost,
              const std::function<std::vector<double>()>& values, std::size_t i = 0);
// The same, charged `flops` and the bytes of `in` read and of the output written.
Array charged(const Instruction& ins, const Arrays& in, double flops,
              const std::function<std::vector<double>()>& values, std::size_t i = 0);

// Row-major strides of `shape`.
std::vector<std::int64_t> strides_of(const Shape& shape);
// The multi-index of flat index `flat` in `shape`.
std::vector<std::int64_t> index_of(std::int64_t flat, const Shape& shape);

}  // namespace spmdsim::python
