#include "collectives/reduction_values.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "api/kernels/kernels.hpp"
#include "collectives/chunks.hpp"

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
  const auto begin = [n, p](std::int64_t k) { return split_flat_offset(n, p, k); };  // of split_flat's piece k
  return flats.front().visit_values([&](const auto& first) {
    using T = typename std::decay_t<decltype(first)>::Scalar;
    std::vector<const T*> inputs;
    for (const Array& flat : flats) inputs.push_back(flat.values<T>().data());
    Vector<T> out(n);
    // Piece k takes rank k+1's piece at step 1 and rank k+j's in front at steps j = 2..p. A block of pieces
    // [k0, k1), clipped to elements [a, b), is swept by t: every piece k of it with 1 <= t - k <= p takes its
    // step t - k from rank t mod p. So each piece's steps stay in order, and each sweep reads one contiguous
    // run of one rank's input (small pieces are swept together, as the bare sum reads long runs).
    const auto sweep = [&](std::int64_t k0, std::int64_t k1, std::int64_t a, std::int64_t b) {
      for (std::int64_t t = k0 + 1; t <= k1 - 1 + p; ++t) {
        const T* rank = inputs[static_cast<std::size_t>(t % p)];
        const std::int64_t from = std::max(a, begin(std::max(k0, t - p)));
        const std::int64_t to = std::min(b, begin(std::min(k1, t - 1)));
        if (from < to) fold_in_front(out.data() + from, rank + from, to - from, op);
        if (t - 1 >= k0 && t - 1 < k1) {  // piece t - 1 starts
          const std::int64_t start = std::max(a, begin(t - 1));
          std::copy(rank + start, rank + std::min(b, begin(t)), out.data() + start);
        }
      }
    };
    for (std::int64_t k0 = 0; k0 < p;) {
      std::int64_t k1 = k0 + 1;
      while (k1 < p && begin(k1 + 1) - begin(k0) <= kStripe) ++k1;
      if (begin(k1) - begin(k0) <= kStripe) {
        sweep(k0, k1, begin(k0), begin(k1));
      } else {  // one piece larger than a stripe: stripe by stripe
        for (std::int64_t a = begin(k0); a < begin(k1); a += kStripe)
          sweep(k0, k1, a, std::min(a + kStripe, begin(k1)));
      }
      k0 = k1;
    }
    return Array(Shape{n}, Storage(std::move(out)));
  });
}

Array rank_order_all_reduce_values(const std::vector<Array>& flats, ReduceOp op) {
  const std::int64_t n = flats.front().size();
  return flats.front().visit_values([&](const auto& first) {
    using T = typename std::decay_t<decltype(first)>::Scalar;
    Vector<T> out = first;
    // Stripe by stripe, so that the running values stay in cache while the ranks' inputs stream past.
    for (std::int64_t a = 0; a < n; a += kStripe)
      for (std::size_t r = 1; r < flats.size(); ++r)
        fold_in_front(out.data() + a, flats[r].values<T>().data() + a, std::min(kStripe, n - a), op);
    return Array(Shape{n}, Storage(std::move(out)));
  });
}

}  // namespace spmdsim::collectives
