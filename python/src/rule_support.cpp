#include "rule_support.hpp"

#include <algorithm>

#include "spmdsim/ops.hpp"

namespace spmdsim::python {
namespace {

bool abstract_run = false;

}  // namespace

AbstractRun::AbstractRun(bool abstract) : previous_(abstract_run) {
  abstract_run = abstract;
}

AbstractRun::~AbstractRun() {
  abstract_run = previous_;
}

bool leaves_abstract(const Shape& shape) {
  return abstract_run && num_elements(shape) > kMaxRealElementsInAbstractRun;
}

double bytes_of(const Arrays& arrays) {
  double bytes = 0;
  for (const auto& a : arrays) bytes += static_cast<double>(a.nbytes());
  return bytes;
}

bool any_abstract(const Arrays& arrays) {
  return std::any_of(arrays.begin(), arrays.end(), [](const Array& a) { return a.is_abstract(); });
}

Array charged(const Instruction& ins, const Arrays& in, const OpCost& cost,
              const std::function<std::vector<double>()>& values, std::size_t i) {
  const Shape& shape = ins.out_shapes[i];
  const DType dtype = ins.out_dtypes[i];
  Array result = any_abstract(in) || leaves_abstract(shape) ? Array::abstract(shape, dtype)
                                                            : Array::from_values(shape, values(), dtype);
  return custom_op(ins.primitive, cost, std::move(result));
}

double bytes_written(const Instruction& ins, std::size_t i) {
  return static_cast<double>(num_elements(ins.out_shapes[i])) *
         static_cast<double>(itemsize(ins.out_dtypes[i]));
}

Array charged(const Instruction& ins, const Arrays& in, double flops,
              const std::function<std::vector<double>()>& values, std::size_t i) {
  return charged(ins, in, OpCost{.flops = flops, .bytes = bytes_of(in) + bytes_written(ins, i)}, values, i);
}

std::vector<std::int64_t> strides_of(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::vector<std::int64_t> index_of(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return index;
}

}  // namespace spmdsim::python
