// Device operations, jax.numpy style. Inside a pmapped function each op runs on the calling device: it
// computes in Eigen (nothing for abstract inputs), allocates its result in device memory as a temporary,
// and takes the roofline time of its FLOPs and bytes. Called on the host (outside pmap) an op just
// computes, at no simulated cost.
//
// Shapes, dtypes and broadcasting follow jax.numpy; bad input throws TypeError / ValueError / IndexError
// (errors.hpp) with JAX's wording.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/device_spec.hpp"  // OpCost

namespace spmdsim {

// Elementwise binary ops with numpy broadcasting; the result dtype is promote_types of the operands.
Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);

// A C++ scalar is weakly typed, as a Python scalar in JAX: it takes the array's dtype.
Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);
Array operator+(const Array& a, double s);
Array operator-(const Array& a, double s);
Array operator*(const Array& a, double s);
Array operator/(const Array& a, double s);
Array operator+(double s, const Array& a);
Array operator-(double s, const Array& a);
Array operator*(double s, const Array& a);
Array operator/(double s, const Array& a);
Array operator-(const Array& a);

// Elementwise unary ops.
Array negative(const Array& a);
Array tanh(const Array& a);
Array relu(const Array& a);
Array exp(const Array& a);
Array log(const Array& a);
Array sqrt(const Array& a);
Array square(const Array& a);
Array abs(const Array& a);
Array astype(const Array& a, DType dtype);

// Which matmul operands enter transposed (their last two axes swapped).
struct MatmulTranspose {
  bool a = false;
  bool b = false;
};

// jnp.dot / jnp.matmul for 1-d and 2-d operands (and a leading batch dimension for matmul on 3-d).
// `transpose` gives matmul(transpose(a), b) and the like as XLA runs them after its TransposeFolding pass and
// cuBLAS through its transa / transb flags: one matmul that reads the operand in place, no transposed copy.
Array matmul(const Array& a, const Array& b, MatmulTranspose transpose = {});
Array dot(const Array& a, const Array& b);

// Reductions over one axis (negative counts from the end), or over all axes with std::nullopt.
Array sum(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array mean(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array max(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array min(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

// Layout ops. reshape accepts one -1 dimension.
Array reshape(const Array& a, Shape shape);
Array transpose(const Array& a, std::vector<int> axes = {});
// a[start:stop] along one axis (negative indices count from the end, clamped as numpy does).
Array slice(const Array& a, int axis, std::int64_t start, std::int64_t stop);
// Index i along an axis, removing it (x[i] for axis 0).
Array take(const Array& a, int axis, std::int64_t index);
Array concatenate(const std::vector<Array>& arrays, int axis = 0);
// Inserts a new axis and stacks along it.
Array stack(const std::vector<Array>& arrays, int axis = 0);
Array broadcast_to(const Array& a, Shape shape);

// Runs `body` as one fused kernel on the calling device, as XLA fuses a chain of elementwise ops or a
// multi-tensor optimizer step runs a parameter's update: the ops inside compute their values but are neither
// charged nor placed one by one (their intermediates never reach device memory). The kernel is charged once,
// one launch, for the ops' summed FLOPs and the bytes of `inputs` read and of its results written, at the
// peak of its first result's dtype, its bytes at the device's achieved memory bandwidth
// (DeviceSpec::kernel_time); its results are placed as temporaries. Inside another fused body, on the host,
// or with SimulationOptions::fusion off, it is body().
std::vector<Array> fused(std::string_view name, const std::vector<Array>& inputs,
                         const std::function<std::vector<Array>()>& body);
// As above, charged `flops` (a positive count, the kernel's own) instead of its body's: for a kernel whose
// body stands in for less arithmetic than it does (a gather of one value per row written as a one-hot
// product).
std::vector<Array> fused(std::string_view name, const std::vector<Array>& inputs, double flops,
                         const std::function<std::vector<Array>()>& body);

// A FlashAttention-style kernel: as fused (the body's ops are neither charged nor placed, so no [s, s]
// matrix reaches device memory), but charged `flops`, the kernel's own count, at the device's attention rate
// for `shape` (DeviceSpec::attention_rate), and one kernel whatever SimulationOptions::fusion says.
std::vector<Array> fused_attention(std::string_view name, const std::vector<Array>& inputs,
                                   const AttentionShape& shape, double flops,
                                   const std::function<std::vector<Array>()>& body);

// An op whose values the caller computed (`result`, real or abstract): charged to the calling device as one
// kernel of `cost` and placed there as a temporary, as every op above is. For front ends whose primitives
// spmdsim has no kernel of its own for (python/: a JAX primitive such as logistic or select_n). On the host:
// `result`.
Array custom_op(std::string_view name, const OpCost& cost, Array result);

}  // namespace spmdsim
