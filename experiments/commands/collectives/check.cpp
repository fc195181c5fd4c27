#include "commands/collectives/check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace spmdsim::cli::collectives {
namespace {

template <class T>
double to_double(T x) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(x);
  else
    return static_cast<double>(static_cast<float>(x));  // Eigen::half, Eigen::bfloat16
}

template <class T>
double max_error_of(CollectiveKind kind, int p, std::int64_t count, const Eigen::Map<const Vector<T>>& in,
                    const Eigen::Map<const Vector<T>>& out) {
  const auto P = static_cast<std::int64_t>(p);
  double error = 0;
  const auto compare = [&](T got, double expected) {
    error = std::max(error, std::abs(to_double(got) - expected));
  };
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter: {
      // The sum of every device's input, then each device's share of it.
      const std::int64_t width = kind == CollectiveKind::all_reduce ? count : count * P;
      std::vector<double> sum(static_cast<std::size_t>(width), 0.0);
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t k = 0; k < width; ++k)
          sum[static_cast<std::size_t>(k)] += to_double(in[d * width + k]);
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t k = 0; k < count; ++k) {
          const std::int64_t at = kind == CollectiveKind::all_reduce ? k : d * count + k;
          compare(out[d * count + k], sum[static_cast<std::size_t>(at)]);
        }
      break;
    }
    case CollectiveKind::all_gather:
      // Every device holds every device's piece in rank order: the inputs, flattened.
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t j = 0; j < P * count; ++j) compare(out[d * P * count + j], to_double(in[j]));
      break;
    case CollectiveKind::all_to_all:
      // Device d's block j is device j's block d.
      for (std::int64_t d = 0; d < P; ++d)
        for (std::int64_t j = 0; j < P; ++j)
          for (std::int64_t k = 0; k < count; ++k)
            compare(out[d * P * count + j * count + k], to_double(in[j * P * count + d * count + k]));
      break;
    default:
      throw std::logic_error("no reference for this collective");
  }
  return error;
}

}  // namespace

double max_error(const PlannedRow& row, const Array& in, const Array& out) {
  return in.visit_values([&](const auto& in_values) {
    using T = typename std::decay_t<decltype(in_values)>::Scalar;
    return max_error_of(row.collective->kind, row.p, row.count, in_values, out.values<T>());
  });
}

}  // namespace spmdsim::cli::collectives
