// What the rules of every primitive family share (primitives.cpp, control_flow.cpp, indexing.cpp,
// sorting.cpp, windowed.cpp): values computed here charged through custom_op, and row-major index arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "program.hpp"
#include "spmdsim/device_spec.hpp"

namespace spmdsim::python {

using Arrays = std::vector<Array>;

// An abstract pmap call (some argument abstract) computes real values only where control flow may read them:
// a value that constants alone feed (an iota, a broadcast literal, what follows from them) stays real while
// it is small (a loop's counter, a branch index), and is abstract, costed the same, once it has more than
// kMaxRealElementsInAbstractRun elements (a causal mask), so that an abstract run computes no large array on
// every device and every iteration. AbstractRun marks the pmap call under way (module.cpp's run_pmap): all
// its devices run inside it, on SimGrid's one thread, before the next call starts.
constexpr std::int64_t kMaxRealElementsInAbstractRun = 1024;

class AbstractRun {
 public:
  explicit AbstractRun(bool abstract);
  ~AbstractRun();
  AbstractRun(const AbstractRun&) = delete;  // one call, one scope
  AbstractRun& operator=(const AbstractRun&) = delete;

 private:
  bool previous_;
};

// Whether a value of `shape` is left abstract by the call under way, though its inputs are real.
bool leaves_abstract(const Shape& shape);

double bytes_of(const Arrays& arrays);
// The bytes of the instruction's output `i`.
double bytes_written(const Instruction& ins, std::size_t i = 0);
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

// Whether `order` is 0, 1, ..., n-1: dimensions in place, batch dimensions leading.
template <class Order>
bool is_identity(const Order& order) {
  for (std::size_t d = 0; d < order.size(); ++d)
    if (order[d] != static_cast<typename Order::value_type>(d)) return false;
  return true;
}

}  // namespace spmdsim::python
