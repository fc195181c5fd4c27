// The public device ops: each runs its kernel and charges the kernel's cost to the calling device.
#include "spmdsim/ops.hpp"

#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/kernels/kernels.hpp"
#include "api/op_accounting.hpp"
#include "engine/device_context.hpp"
#include "spmdsim/errors.hpp"

namespace spmdsim {
namespace {

Array accounted(std::string_view name, kernels::KernelResult result) {
  return detail::account_op(name, result.cost, std::move(result.value));
}

// A C++ scalar beside `a`, typed as JAX types a Python scalar (kernels::weak_scalar). Beside an abstract
// array nothing reads its value, so it is abstract too: no storage made per op (pmean divides every leaf of
// every device's gradients by one).
Array scalar_beside(double s, const Array& a) {
  return a.is_abstract() ? Array::abstract({}, kernels::weak_scalar_dtype(s, a.dtype()))
                         : kernels::weak_scalar(s, a.dtype());
}

}  // namespace

Array add(const Array& a, const Array& b) {
  return accounted("add", kernels::add(a, b));
}
Array subtract(const Array& a, const Array& b) {
  return accounted("subtract", kernels::subtract(a, b));
}
Array multiply(const Array& a, const Array& b) {
  return accounted("multiply", kernels::multiply(a, b));
}
Array divide(const Array& a, const Array& b) {
  return accounted("divide", kernels::divide(a, b));
}
Array maximum(const Array& a, const Array& b) {
  return accounted("maximum", kernels::maximum(a, b));
}
Array minimum(const Array& a, const Array& b) {
  return accounted("minimum", kernels::minimum(a, b));
}

Array operator+(const Array& a, const Array& b) {
  return add(a, b);
}
Array operator-(const Array& a, const Array& b) {
  return subtract(a, b);
}
Array operator*(const Array& a, const Array& b) {
  return multiply(a, b);
}
Array operator/(const Array& a, const Array& b) {
  return divide(a, b);
}
Array operator+(const Array& a, double s) {
  return add(a, scalar_beside(s, a));
}
Array operator-(const Array& a, double s) {
  return subtract(a, scalar_beside(s, a));
}
Array operator*(const Array& a, double s) {
  return multiply(a, scalar_beside(s, a));
}
Array operator/(const Array& a, double s) {
  return divide(a, scalar_beside(s, a));
}
Array operator+(double s, const Array& a) {
  return add(scalar_beside(s, a), a);
}
Array operator-(double s, const Array& a) {
  return subtract(scalar_beside(s, a), a);
}
Array operator*(double s, const Array& a) {
  return multiply(scalar_beside(s, a), a);
}
Array operator/(double s, const Array& a) {
  return divide(scalar_beside(s, a), a);
}
Array operator-(const Array& a) {
  return negative(a);
}

Array negative(const Array& a) {
  return accounted("negative", kernels::negative(a));
}
Array tanh(const Array& a) {
  return accounted("tanh", kernels::tanh(a));
}
Array relu(const Array& a) {
  return accounted("relu", kernels::relu(a));
}
Array exp(const Array& a) {
  return accounted("exp", kernels::exp(a));
}
Array log(const Array& a) {
  return accounted("log", kernels::log(a));
}
Array sqrt(const Array& a) {
  return accounted("sqrt", kernels::sqrt(a));
}
Array square(const Array& a) {
  return accounted("square", kernels::square(a));
}
Array abs(const Array& a) {
  return accounted("abs", kernels::abs(a));
}
Array astype(const Array& a, DType dtype) {
  return accounted("astype", kernels::astype(a, dtype));
}

Array matmul(const Array& a, const Array& b, MatmulTranspose transpose) {
  return accounted("matmul", kernels::matmul(a, b, transpose));
}
Array dot(const Array& a, const Array& b) {
  return accounted("dot", kernels::dot(a, b));
}

Array sum(const Array& a, std::optional<int> axis, bool keepdims) {
  return accounted("sum", kernels::sum(a, axis, keepdims));
}
Array mean(const Array& a, std::optional<int> axis, bool keepdims) {
  return accounted("mean", kernels::mean(a, axis, keepdims));
}
Array max(const Array& a, std::optional<int> axis, bool keepdims) {
  return accounted("max", kernels::max(a, axis, keepdims));
}
Array min(const Array& a, std::optional<int> axis, bool keepdims) {
  return accounted("min", kernels::min(a, axis, keepdims));
}

// Free in XLA (a bitcast): same storage and device buffer, no time, no new allocation.
Array reshape(const Array& a, Shape shape) {
  return a.reshaped(kernels::reshape_shape(a.shape(), shape));
}
Array transpose(const Array& a, std::vector<int> axes) {
  return accounted("transpose", kernels::transpose(a, axes));
}
Array slice(const Array& a, int axis, std::int64_t start, std::int64_t stop) {
  return accounted("slice", kernels::slice(a, axis, start, stop));
}
Array take(const Array& a, int axis, std::int64_t index) {
  return accounted("take", kernels::take(a, axis, index));
}
Array concatenate(const std::vector<Array>& arrays, int axis) {
  return accounted("concatenate", kernels::concatenate(arrays, axis));
}
Array stack(const std::vector<Array>& arrays, int axis) {
  return accounted("stack", kernels::stack(arrays, axis));
}
Array broadcast_to(const Array& a, Shape shape) {
  return accounted("broadcast_to", kernels::broadcast_to(a, shape));
}

namespace {

// One kernel for body's ops: their FLOPs summed (or `kernel.flops` where it is set), the inputs read and the
// results written once.
std::vector<Array> one_kernel(detail::DeviceContext* ctx, std::string_view name,
                              const std::vector<Array>& inputs, OpCost kernel,
                              const std::function<std::vector<Array>()>& body) {
  ctx->begin_fusion();
  std::vector<Array> results;
  try {
    results = body();
  } catch (...) {
    ctx->end_fusion();
    throw;
  }
  const double body_flops = ctx->end_fusion();
  if (kernel.flops == 0) kernel.flops = body_flops;
  for (const Array& input : inputs) kernel.bytes += static_cast<double>(input.nbytes());
  for (Array& result : results) {
    kernel.bytes += static_cast<double>(result.nbytes());
    result = ctx->place(result, MemoryTag::temporaries, std::string(name));
  }
  if (!results.empty()) ctx->compute(name, ctx->spec().kernel_time(kernel, results.front().dtype()));
  return results;
}

}  // namespace

std::vector<Array> fused(std::string_view name, const std::vector<Array>& inputs,
                         const std::function<std::vector<Array>()>& body) {
  detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr || ctx->fusing() || !ctx->runtime().fusion()) return body();
  return one_kernel(ctx, name, inputs, {}, body);
}

std::vector<Array> fused(std::string_view name, const std::vector<Array>& inputs, double flops,
                         const std::function<std::vector<Array>()>& body) {
  if (!(flops > 0))
    throw ValueError(fmt::format("fused kernel '{}': flops must be positive, got {}", name, flops));
  detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr || ctx->fusing() || !ctx->runtime().fusion()) return body();
  return one_kernel(ctx, name, inputs, {.flops = flops}, body);
}

std::vector<Array> fused_attention(std::string_view name, const std::vector<Array>& inputs,
                                   const AttentionShape& shape, double flops,
                                   const std::function<std::vector<Array>()>& body) {
  detail::DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr || ctx->fusing()) return body();
  return one_kernel(ctx, name, inputs, {.flops = flops, .attention = shape}, body);
}

Array custom_op(std::string_view name, const OpCost& cost, Array result) {
  return detail::account_op(name, cost, std::move(result));
}

}  // namespace spmdsim
