#include "collectives/ring_all_reduce_values.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "collectives/chunks.hpp"
#include "kernels/kernels.hpp"

namespace spmdsim::collectives {
namespace {

// Elements folded at a time: the running values stay in L1 cache while every rank's inputs stream past once.
constexpr std::int64_t kStripe = 4096;

// The type combine's kernels compute T in (kernels::compute_dtype).
template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, Eigen::bfloat16> || std::is_same_v<T, Eigen::half>,
                                       float, std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>>;

// Calls assign(combine) with combine(x, y) the Eigen expression of x op y in the compute type C, as
// kernels::add, maximum and minimum compute it.
template <class C, class Assign>
void with_combine(ReduceOp op, Assign&& assign) {
  switch (op) {
    case ReduceOp::sum:
      return assign([](const auto& x, const auto& y) { return x + y; });
    case ReduceOp::max:
      return assign([](const auto& x, const auto& y) { return x.binaryExpr(y, kernels::NanMaxOp<C>()); });
    case ReduceOp::min:
      return assign([](const auto& x, const auto& y) { return x.binaryExpr(y, kernels::NanMinOp<C>()); });
  }
}

// running = combine(mine, running) over `width` elements, in place.
template <class T>
void fold_in_front(T* running, const T* mine, std::int64_t width, ReduceOp op) {
  using C = ComputeType<T>;
  Eigen::Map<Vector<T>> acc(running, width);
  const Eigen::Map<const Vector<T>> x(mine, width);
  with_combine<C>(op, [&](auto combine) {
    if constexpr (std::is_same_v<T, C>)
      acc = combine(x, acc);
    else
      acc = combine(x.template cast<C>(), acc.template cast<C>()).template cast<T>();
  });
}

}  // namespace

Array ring_all_reduce_values(const std::vector<Array>& flats, ReduceOp op) {
  const int p = static_cast<int>(flats.size());
  const std::int64_t n = flats.front().size();
  return flats.front().visit_values(
      [&](const auto& first) {
        using T = typename std::decay_t<decltype(first)>::Scalar;
        std::vector<const T*> inputs;
        for (const Array& flat : flats) inputs.push_back(flat.values<T>().data());
        Vector<T> out(n);
        std::int64_t offset = 0;
        for (int k = 0; k < p; ++k) {  // split_flat's piece k
          const std::int64_t end = offset + n / p + (k < n % p ? 1 : 0);
          for (std::int64_t start = offset; start < end; start += kStripe) {
            const std::int64_t width = std::min(kStripe, end - start);
            T* running = out.data() + start;
            std::copy_n(inputs[static_cast<std::size_t>(wrap(k + 1, p))] + start, width, running);
            for (int j = 2; j <= p; ++j)
              fold_in_front(running, inputs[static_cast<std::size_t>(wrap(k + j, p))] + start, width, op);
          }
          offset = end;
        }
        return Array(Shape{n}, Storage(std::move(out)));
      });
}

}  // namespace spmdsim::collectives
