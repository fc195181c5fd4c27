// lax.sort along one dimension, stable, in XLA's total order for floats (-0.0 before 0.0, NaN last), every
// operand permuted as the keys are. Charged as one kernel of n log2 n comparisons per key per row.
#include "sorting.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "spmdsim/ops.hpp"

namespace spmdsim::python {
namespace {

bool total_order_less(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

}  // namespace

// ints[0]: the dimension, ints[1]: how many leading operands are keys.
Arrays sort_rule(const Arrays& in, const Instruction& ins) {
  const auto dimension = static_cast<std::size_t>(ins.ints.at(0));
  const auto num_keys = static_cast<std::size_t>(ins.ints.at(1));
  const Shape& shape = in[0].shape();
  const std::int64_t length = shape[dimension];
  const double comparisons = static_cast<double>(in[0].size()) *
                             std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(length, 2))));
  std::vector<std::vector<double>> sorted;
  if (!any_abstract(in)) {
    std::vector<std::vector<double>> values;
    for (const auto& a : in) values.push_back(a.to_doubles());
    sorted = values;
    const std::int64_t stride = strides_of(shape)[dimension];
    std::vector<std::int64_t> order(static_cast<std::size_t>(length));
    for (std::int64_t e = 0; e < in[0].size(); ++e) {
      if (index_of(e, shape)[dimension] != 0) continue;  // e starts a row along the dimension
      const auto at = [&](std::int64_t i) { return static_cast<std::size_t>(e + i * stride); };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        for (std::size_t k = 0; k < num_keys; ++k) {
          if (total_order_less(values[k][at(a)], values[k][at(b)])) return true;
          if (total_order_less(values[k][at(b)], values[k][at(a)])) return false;
        }
        return false;
      });
      for (std::size_t op = 0; op < in.size(); ++op)
        for (std::int64_t i = 0; i < length; ++i)
          sorted[op][at(i)] = values[op][at(order[static_cast<std::size_t>(i)])];
    }
  }
  // One kernel for every operand, as XLA sorts them together.
  return fused(ins.primitive, in, [&] {
    Arrays out;
    for (std::size_t op = 0; op < in.size(); ++op) {
      const OpCost cost{.flops = op == 0 ? comparisons * static_cast<double>(num_keys) : 0,
                        .bytes = op == 0 ? 2 * bytes_of(in) : 0};
      out.push_back(charged(
          ins, in, cost, [&] { return sorted[op]; }, op));
    }
    return out;
  });
}

}  // namespace spmdsim::python
