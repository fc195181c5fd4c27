// Device ops against jax.numpy 0.5.2: values (expected numbers computed with JAX on CPU), shapes, dtypes,
// costs, abstract mode and JAX's exact error messages.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/kernels/kernels.hpp"
#include "spmdsim/array.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Array f32(Shape shape, const std::vector<double>& values) {
  return Array::from_values(std::move(shape), values);
}

// Same shape, dtype and values (NaN matches NaN).
void expect_array(const Array& actual, const Shape& shape, DType dtype, const std::vector<double>& values) {
  EXPECT_EQ(shape_str(actual.shape()), shape_str(shape));
  EXPECT_EQ(dtype_name(actual.dtype()), dtype_name(dtype));
  if (actual.shape() != shape) return;
  ASSERT_EQ(static_cast<std::size_t>(actual.size()), values.size());
  auto got = actual.to_doubles();
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_TRUE(got[i] == values[i] || (std::isnan(got[i]) && std::isnan(values[i])))
        << "at flat index " << i << ": got " << got[i] << ", expected " << values[i];
}

// Same shape and dtype, values within a relative tolerance (for transcendental functions and sums, whose
// last bits depend on the implementation).
void expect_close(const Array& actual, const Shape& shape, DType dtype, const std::vector<double>& values,
                  double rtol = 1e-6) {
  EXPECT_EQ(shape_str(actual.shape()), shape_str(shape));
  EXPECT_EQ(dtype_name(actual.dtype()), dtype_name(dtype));
  if (actual.shape() != shape) return;
  ASSERT_EQ(static_cast<std::size_t>(actual.size()), values.size());
  auto got = actual.to_doubles();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i]) || std::isinf(values[i]))
      EXPECT_TRUE(std::isnan(values[i]) ? std::isnan(got[i]) : got[i] == values[i]) << "at flat index " << i;
    else
      EXPECT_NEAR(got[i], values[i], rtol * std::abs(values[i])) << "at flat index " << i;
  }
}

template <class E>
void expect_error(const std::function<void()>& fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

// Like EXPECT_THROW, and the message must be exactly JAX's.
#define EXPECT_ERROR(statement, Type, message) expect_error<Type>([&] { statement; }, message)

void expect_cost(const kernels::KernelResult& result, double flops, double bytes) {
  EXPECT_EQ(result.cost.flops, flops);
  EXPECT_EQ(result.cost.bytes, bytes);
}

// ---------------------------------------------------------------------------------------------------------
// Elementwise binary ops

Array lhs() {
  return f32({6}, {0.1, 0.7, -1.3, 3.14159, 1e-8, 2.5});
}
Array rhs() {
  return f32({6}, {0.2, 0.3, 1e7, -2.71828, 1.0, -0.5});
}

TEST(Binary, Float32MatchesJaxBitForBit) {
  Array x = lhs();
  Array y = rhs();
  expect_array(add(x, y), {6}, DType::f32,
               {0.30000001192092896, 1.0, 9999999.0, 0.4233100414276123, 1.0, 2.0});
  expect_array(subtract(x, y), {6}, DType::f32,
               {-0.10000000149011612, 0.3999999761581421, -10000001.0, 5.859869956970215, -1.0, 3.0});
  expect_array(multiply(x, y), {6}, DType::f32,
               {0.020000001415610313, 0.21000000834465027, -13000000.0, -8.539721488952637,
                9.99999993922529e-09, -1.25});
  expect_array(
      divide(x, y), {6}, DType::f32,
      {0.5, 2.3333332538604736, -1.2999998943996616e-07, -1.1557271480560303, 9.99999993922529e-09, -5.0});
  expect_array(maximum(x, y), {6}, DType::f32,
               {0.20000000298023224, 0.699999988079071, 10000000.0, 3.141590118408203, 1.0, 2.5});
  expect_array(minimum(x, y), {6}, DType::f32,
               {0.10000000149011612, 0.30000001192092896, -1.2999999523162842, -2.718280076980591,
                9.99999993922529e-09, -0.5});
}

TEST(Binary, OperatorsAreTheNamedOps) {
  Array x = lhs();
  Array y = rhs();
  EXPECT_TRUE(array_equal(x + y, add(x, y)));
  EXPECT_TRUE(array_equal(x - y, subtract(x, y)));
  EXPECT_TRUE(array_equal(x * y, multiply(x, y)));
  EXPECT_TRUE(array_equal(x / y, divide(x, y)));
  EXPECT_TRUE(array_equal(-x, negative(x)));
}

TEST(Binary, BroadcastsAnyRank) {
  Array a = reshape(Array::arange(6, DType::f32), {2, 1, 3});
  Array b = reshape(Array::arange(4, DType::f32), {4, 1}) * 10.0;
  expect_array(a + b, {2, 4, 3}, DType::f32,
               {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 3, 4, 5, 13, 14, 15, 23, 24, 25, 33, 34, 35});
  expect_array(b + a, {2, 4, 3}, DType::f32,
               {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 3, 4, 5, 13, 14, 15, 23, 24, 25, 33, 34, 35});
  // A row against a matrix, and size-1 operands that are not 0-d.
  Array m = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(m - f32({3}, {1, 1, 2}), {2, 3}, DType::f32, {0, 1, 1, 3, 4, 4});
  expect_array(f32({1, 1}, {2}) * m, {2, 3}, DType::f32, {2, 4, 6, 8, 10, 12});
  expect_array(m / f32({1, 1, 1}, {2}), {1, 2, 3}, DType::f32, {0.5, 1, 1.5, 2, 2.5, 3});
  expect_array(maximum(Array::scalar(3), m), {2, 3}, DType::f32, {3, 3, 3, 4, 5, 6});
  expect_array(add(Array::zeros({0, 3}), f32({3}, {1, 2, 3})), {0, 3}, DType::f32, {});
}

TEST(Binary, IncompatibleShapesThrowJaxValueError) {
  EXPECT_ERROR(add(Array::zeros({2, 3}), Array::zeros({4})), ValueError,
               "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]");
  EXPECT_ERROR(multiply(Array::zeros({2, 3, 4}), Array::zeros({5, 1})), ValueError,
               "Incompatible shapes for broadcasting: shapes=[(2, 3, 4), (5, 1)]");
}

TEST(Binary, PromotesDtypesAsJax) {
  Array i = Array::from_values({2}, {3, -2}, DType::i32);
  Array b = Array::from_values({2}, {1, 0}, DType::boolean);
  Array b_reversed = Array::from_values({2}, {0, 1}, DType::boolean);
  expect_array(add(i, f32({2}, {0.5, 0.5})), {2}, DType::f32, {3.5, -1.5});
  expect_array(add(i, b), {2}, DType::i32, {4, -2});
  expect_array(subtract(i, b), {2}, DType::i32, {2, -2});
  expect_array(maximum(i, b), {2}, DType::i32, {3, 0});
  // bool + bool is or, bool * bool is and, max/min are or/and.
  expect_array(add(b, b_reversed), {2}, DType::boolean, {1, 1});
  expect_array(multiply(b, b_reversed), {2}, DType::boolean, {0, 0});
  expect_array(maximum(b, b_reversed), {2}, DType::boolean, {1, 1});
  expect_array(minimum(b, b_reversed), {2}, DType::boolean, {0, 0});
  // f16 with bf16 promotes to f32.
  Array h = Array::from_values({2}, {1.5, -2}, DType::f16);
  Array bf = Array::from_values({2}, {0.1, 3}, DType::bf16);
  expect_array(multiply(h, bf), {2}, DType::f32, {0.150146484375, -6.0});
}

TEST(Binary, DivideIsTrueDivision) {
  Array i = Array::from_values({2}, {3, -2}, DType::i32);
  expect_close(divide(i, Array::from_values({2}, {-2, 3}, DType::i32)), {2}, DType::f32,
               {-1.5, -0.6666666865348816});
  expect_array(i / 2.0, {2}, DType::f32, {1.5, -1});
  expect_array(f32({3}, {1, -1, 0}) / 0.0, {3}, DType::f32, {kInf, -kInf, kNaN});
}

TEST(Binary, Bfloat16RoundsOncePerElement) {
  Array a = Array::from_values({2}, {1.0, 3.0}, DType::bf16);
  Array b = Array::from_values({2}, {0.00390625, 0.0078125}, DType::bf16);
  expect_array(add(a, b), {2}, DType::bf16, {1.0, 3.0});
  expect_array(multiply(a, Array::from_values({2}, {1.5, 1.3}, DType::bf16)), {2}, DType::bf16,
               {1.5, 3.890625});
}

TEST(Binary, MaximumAndMinimumPropagateNaN) {
  Array a = f32({3}, {kNaN, 1, 2});
  Array b = f32({3}, {1, kNaN, 1});
  expect_array(maximum(a, b), {3}, DType::f32, {kNaN, kNaN, 2});
  expect_array(minimum(a, b), {3}, DType::f32, {kNaN, kNaN, 1});
}

TEST(Binary, BoolSubtractThrowsJaxTypeError) {
  Array b = Array::from_values({2}, {1, 0}, DType::boolean);
  EXPECT_ERROR(subtract(b, b), TypeError,
               "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
               "subtypes of integer, floating, complexfloating.");
}

TEST(Binary, CppScalarsAreWeaklyTyped) {
  Array x = lhs();
  expect_array(x * 0.1, {6}, DType::f32,
               {0.010000000707805157, 0.07000000029802322, -0.12999999523162842, 0.31415900588035583,
                9.999999717180685e-10, 0.25});
  expect_array(0.3 - x, {6}, DType::f32,
               {0.20000001788139343, -0.3999999761581421, 1.5999999046325684, -2.841590166091919,
                0.30000001192092896, -2.200000047683716});
  expect_array(
      1.0 / x, {6}, DType::f32,
      {10.0, 1.4285714626312256, -0.7692307829856873, 0.3183101415634155, 100000000.0, 0.4000000059604645});
  Array bf = Array::from_values({2}, {1.5, -2}, DType::bf16);
  expect_array(bf + 1.0, {2}, DType::bf16, {2.5, -1});
  expect_array(2.0 * bf, {2}, DType::bf16, {3, -4});
  // Next to ints and bools a whole number is a Python int, anything else a Python float.
  Array i = Array::from_values({2}, {3, -2}, DType::i32);
  expect_array(i + 2.0, {2}, DType::i32, {5, 0});
  expect_array(i * 0.5, {2}, DType::f32, {1.5, -1});
  expect_array(i + 3e9, {2}, DType::f32, {3000000000.0, 3000000000.0});
  expect_array(Array::from_values({2}, {1, 0}, DType::boolean) + 1.0, {2}, DType::i32, {2, 1});
}

// ---------------------------------------------------------------------------------------------------------
// Elementwise unary ops

Array unary_input() {
  return f32({6}, {-2.0, -0.5, 0.0, 0.3, 1.5, 4.0});
}

TEST(Unary, Float32MatchesJax) {
  Array u = unary_input();
  expect_close(tanh(u), {6}, DType::f32,
               {-0.9640275835990906, -0.46211716532707214, 0.0, 0.2913126051425934, 0.9051482081413269,
                0.9993292093276978});
  expect_close(exp(u), {6}, DType::f32,
               {0.1353352814912796, 0.6065306663513184, 1.0, 1.3498587608337402, 4.481688976287842,
                54.59815216064453});
  expect_close(log(u), {6}, DType::f32,
               {kNaN, kNaN, -kInf, -1.2039728164672852, 0.40546509623527527, 1.3862943649291992});
  expect_close(sqrt(u), {6}, DType::f32, {kNaN, kNaN, 0.0, 0.547722578048706, 1.2247449159622192, 2.0});
  expect_array(relu(u), {6}, DType::f32, {0.0, 0.0, 0.0, 0.30000001192092896, 1.5, 4.0});
  expect_array(square(u), {6}, DType::f32, {4.0, 0.25, 0.0, 0.09000000357627869, 2.25, 16.0});
  expect_array(abs(u), {6}, DType::f32, {2.0, 0.5, 0.0, 0.30000001192092896, 1.5, 4.0});
  expect_array(negative(u), {6}, DType::f32, {2.0, 0.5, -0.0, -0.30000001192092896, -1.5, -4.0});
  EXPECT_TRUE(std::signbit(negative(u).item(2)));
}

TEST(Unary, Bfloat16ComputesInFloatAndRoundsOnce) {
  Array u = astype(unary_input(), DType::bf16);
  expect_array(tanh(u), {6}, DType::bf16, {-0.96484375, -0.462890625, 0.0, 0.29296875, 0.90625, 1.0});
  expect_array(exp(u), {6}, DType::bf16, {0.1357421875, 0.60546875, 1.0, 1.3515625, 4.46875, 54.5});
  expect_array(log(u), {6}, DType::bf16, {kNaN, kNaN, -kInf, -1.203125, 0.40625, 1.3828125});
  expect_array(sqrt(u), {6}, DType::bf16, {kNaN, kNaN, 0.0, 0.546875, 1.2265625, 2.0});
  expect_array(relu(u), {6}, DType::bf16, {0.0, 0.0, 0.0, 0.30078125, 1.5, 4.0});
  expect_array(square(u), {6}, DType::bf16, {4.0, 0.25, 0.0, 0.09033203125, 2.25, 16.0});
  expect_array(abs(u), {6}, DType::bf16, {2.0, 0.5, 0.0, 0.30078125, 1.5, 4.0});
  expect_array(negative(u), {6}, DType::bf16, {2.0, 0.5, -0.0, -0.30078125, -1.5, -4.0});
}

TEST(Unary, IntAndBoolDtypesAsJax) {
  Array i = Array::from_values({2}, {3, -2}, DType::i32);
  Array b = Array::from_values({2}, {1, 0}, DType::boolean);
  expect_close(tanh(i), {2}, DType::f32, {0.9950547, -0.9640276});
  expect_close(exp(b), {2}, DType::f32, {2.7182817, 1.0});
  expect_close(log(i), {2}, DType::f32, {1.0986123, kNaN});
  expect_close(sqrt(b), {2}, DType::f32, {1.0, 0.0});
  expect_array(negative(i), {2}, DType::i32, {-3, 2});
  expect_array(relu(i), {2}, DType::i32, {3, 0});
  expect_array(relu(b), {2}, DType::i32, {1, 0});
  expect_array(square(i), {2}, DType::i32, {9, 4});
  expect_array(square(b), {2}, DType::i32, {1, 0});
  expect_array(abs(i), {2}, DType::i32, {3, 2});
  expect_array(abs(b), {2}, DType::boolean, {1, 0});
}

TEST(Unary, ReluKeepsNaN) {
  expect_array(relu(f32({3}, {kNaN, -1, 2})), {3}, DType::f32, {kNaN, 0, 2});
}

TEST(Unary, NegativeOfBoolThrowsJaxTypeError) {
  const std::string message =
      "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.";
  Array b = Array::from_values({2}, {1, 0}, DType::boolean);
  EXPECT_ERROR(negative(b), TypeError, message);
  EXPECT_ERROR(-b, TypeError, message);
}

TEST(Astype, ConvertsAsXla) {
  Array x = f32({6}, {kNaN, 1e10, -1e10, 2.7, -2.7, kInf});
  expect_array(astype(x, DType::i32), {6}, DType::i32, {0, 2147483647, -2147483648.0, 2, -2, 2147483647});
  expect_array(astype(f32({4}, {kNaN, 0, -0.0, 2.7}), DType::boolean), {4}, DType::boolean, {1, 0, 0, 1});
  expect_array(astype(f32({4}, {1.00390625, 1.01171875, 3.14159, -1e-3}), DType::bf16), {4}, DType::bf16,
               {1.0, 1.015625, 3.140625, -0.00099945068359375});
  expect_array(astype(Array::from_values({2}, {1, 0}, DType::boolean), DType::f16), {2}, DType::f16, {1, 0});
  expect_array(astype(Array::from_values({2}, {-2.5, 3.75}, DType::bf16), DType::i32), {2}, DType::i32,
               {-2, 3});
}

TEST(ElementwiseCost, CountsOutputElementsAndBytes) {
  Array m = Array::zeros({2, 3});
  expect_cost(kernels::add(m, Array::zeros({3})), 6, 24 + 12 + 24);
  expect_cost(kernels::multiply(m, kernels::weak_scalar(2.0, DType::f32)), 6, 24 + 4 + 24);
  // i32 / i32 writes float32; bf16 ops read and write 2 bytes per element.
  expect_cost(kernels::divide(Array::zeros({4}, DType::i32), Array::zeros({4}, DType::i32)), 4, 16 + 16 + 16);
  expect_cost(kernels::tanh(Array::zeros({2, 3}, DType::bf16)), 6, 12 + 12);
  expect_cost(kernels::relu(Array::zeros({5}, DType::boolean)), 5, 5 + 20);
  expect_cost(kernels::astype(m, DType::bf16), 0, 24 + 12);
}

// ---------------------------------------------------------------------------------------------------------
// Matrix products

Array iota(const Shape& shape, DType dtype = DType::f32) {
  return reshape(Array::arange(num_elements(shape), dtype), shape);
}

TEST(Matmul, AllRankCombinations) {
  Array m23 = iota({2, 3});
  Array m32 = iota({3, 2});
  Array v3 = f32({3}, {1, 2, 3});
  expect_array(matmul(m23, m32), {2, 2}, DType::f32, {10, 13, 28, 40});
  expect_array(matmul(m23, v3), {2}, DType::f32, {8, 26});
  expect_array(matmul(v3, m32), {2}, DType::f32, {16, 22});
  expect_array(matmul(v3, v3), {}, DType::f32, {14});
  Array b223 = iota({2, 2, 3});
  Array b232 = iota({2, 3, 2});
  expect_array(matmul(b223, b232), {2, 2, 2}, DType::f32, {10, 13, 28, 40, 172, 193, 244, 274});
  // A batch of one, or none, broadcasts; 1-d operands drop their dimension.
  expect_array(matmul(iota({1, 2, 3}), b232), {2, 2, 2}, DType::f32, {10, 13, 28, 40, 28, 31, 100, 112});
  expect_array(matmul(b223, m32), {2, 2, 2}, DType::f32, {10, 13, 28, 40, 46, 67, 64, 94});
  expect_array(matmul(b223, v3), {2, 2}, DType::f32, {8, 26, 44, 62});
  expect_array(matmul(v3, b232), {2, 2}, DType::f32, {16, 22, 52, 58});
  expect_array(matmul(iota({2, 0}), iota({0, 3})), {2, 3}, DType::f32, {0, 0, 0, 0, 0, 0});
}

// A transposed operand gives the product of the transpose, for matrices and batches of them.
TEST(Matmul, TransposedOperandsAreTheProductOfTheTranspose) {
  const Array m23 = iota({2, 3});
  const Array m32 = iota({3, 2});
  expect_array(matmul(m32, m32, {.a = true}), {2, 2}, DType::f32, {20, 26, 26, 35});
  expect_array(matmul(m23, m23, {.b = true}), {2, 2}, DType::f32, {5, 14, 14, 50});
  expect_array(matmul(m23, m32, {.a = true, .b = true}), {3, 3}, DType::f32,
               {3, 9, 15, 4, 14, 24, 5, 19, 33});
  const Array b223 = iota({2, 2, 3});
  expect_array(matmul(b223, b223, {.b = true}), {2, 2, 2}, DType::f32, {5, 14, 14, 50, 149, 212, 212, 302});
  // A 1-d operand has nothing to transpose.
  expect_array(matmul(f32({3}, {1, 2, 3}), m23, {.a = true, .b = true}), {2}, DType::f32, {8, 26});
}

TEST(Matmul, Float32AccumulatesLikeJax) {
  Array a = reshape(Array::arange(20, DType::f32) * 0.37 - 2.1, {4, 5});
  Array b = reshape(Array::arange(15, DType::f32) * -0.23 + 1.3, {5, 3});
  expect_close(matmul(a, b), {4, 3}, DType::f32,
               {-2.009000062942505, -0.44499966502189636, 1.1190000772476196, -2.749000072479248,
                -3.312500238418579, -3.87600040435791, -3.4890005588531494, -6.180001258850098,
                -8.871001243591309, -4.229000568389893, -9.047500610351562, -13.86600112915039},
               1e-5);
}

TEST(Matmul, DtypesAsJax) {
  expect_array(matmul(iota({2, 3}, DType::i32), iota({3, 2}, DType::i32)), {2, 2}, DType::i32,
               {10, 13, 28, 40});
  expect_array(matmul(Array::from_values({1, 2}, {1, 0}, DType::boolean),
                      Array::from_values({2, 1}, {1, 1}, DType::boolean)),
               {1, 1}, DType::boolean, {1});
  expect_array(matmul(Array::from_values({1, 2}, {0, 0}, DType::boolean),
                      Array::from_values({2, 1}, {1, 1}, DType::boolean)),
               {1, 1}, DType::boolean, {0});
  expect_array(matmul(Array::full({2, 2}, 1, DType::i32), Array::full({2, 2}, 1, DType::bf16)), {2, 2},
               DType::bf16, {2, 2, 2, 2});
  // bf16 products accumulate in float32 and round once: 1 + 300 * 2^-8 is exact in bf16 only via float.
  Array ones = Array::full({1, 301}, 1, DType::bf16);
  std::vector<double> column(301, 0.00390625);
  column[0] = 1;
  expect_array(matmul(ones, Array::from_values({301, 1}, column, DType::bf16)), {1, 1}, DType::bf16,
               {2.171875});
}

TEST(Matmul, ErrorsMatchJax) {
  const std::string mismatch = "dot_general requires contracting dimensions to have the same shape, got ";
  EXPECT_ERROR(matmul(Array::zeros({2, 3}), Array::zeros({4, 5})), TypeError, mismatch + "(3,) and (4,).");
  EXPECT_ERROR(matmul(Array::zeros({2, 3}), Array::zeros({4})), TypeError, mismatch + "(3,) and (4,).");
  EXPECT_ERROR(matmul(Array::zeros({3}), Array::zeros({4, 5})), TypeError, mismatch + "(3,) and (4,).");
  EXPECT_ERROR(matmul(Array::zeros({3}), Array::zeros({4})), TypeError, mismatch + "(3,) and (4,).");
  EXPECT_ERROR(matmul(Array::zeros({2, 3, 4}), Array::zeros({2, 5, 6})), TypeError,
               mismatch + "(4,) and (5,).");
  EXPECT_ERROR(matmul(Array::zeros({2, 3, 4}), Array::zeros({5})), TypeError, mismatch + "(4,) and (5,).");
  EXPECT_ERROR(matmul(Array::zeros({2, 3, 4}), Array::zeros({3, 4, 6})), ValueError,
               "Incompatible shapes for matmul arguments: (2, 3, 4) and (3, 4, 6)");
  EXPECT_ERROR(matmul(Array::zeros({2, 3, 4}), Array::zeros({3, 5, 6})), ValueError,
               "Incompatible shapes for matmul arguments: (2, 3, 4) and (3, 5, 6)");
  EXPECT_ERROR(matmul(Array::scalar(1), Array::zeros({3})), ValueError,
               "matmul input operand 0 must have ndim at least 1, but it has ndim 0");
  EXPECT_ERROR(matmul(Array::zeros({3}), Array::scalar(1)), ValueError,
               "matmul input operand 1 must have ndim at least 1, but it has ndim 0");
  // Not JAX's: jnp.matmul broadcasts any number of batch dimensions, spmdsim one.
  EXPECT_ERROR(matmul(Array::zeros({1, 2, 3, 4}), Array::zeros({4, 2})), ValueError,
               "spmdsim's matmul supports operands of at most 3 dimensions, got (1, 2, 3, 4) and (4, 2)");
}

TEST(Dot, IsMatmulUpToTwoDimensions) {
  Array m23 = iota({2, 3});
  Array m32 = iota({3, 2});
  Array v3 = f32({3}, {1, 2, 3});
  EXPECT_TRUE(array_equal(dot(m23, m32), matmul(m23, m32)));
  EXPECT_TRUE(array_equal(dot(m23, v3), matmul(m23, v3)));
  EXPECT_TRUE(array_equal(dot(v3, m32), matmul(v3, m32)));
  expect_array(dot(v3, v3), {}, DType::f32, {14});
  // jnp.dot with a 0-d operand multiplies.
  expect_array(dot(Array::scalar(2), v3), {3}, DType::f32, {2, 4, 6});
  EXPECT_ERROR(dot(Array::zeros({2, 3}), Array::zeros({4, 5})), TypeError,
               "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,).");
  // Not JAX's: jnp.dot of 3-d operands contracts into a (2, 3, 2, 6) result, which spmdsim does not model.
  EXPECT_ERROR(dot(Array::zeros({2, 3, 4}), Array::zeros({2, 4, 6})), ValueError,
               "spmdsim's dot supports operands of at most 2 dimensions, got (2, 3, 4) and (2, 4, 6); "
               "use matmul for batches");
}

TEST(MatmulCost, IsTwoMnkFlopsPerBatch) {
  expect_cost(kernels::matmul(Array::zeros({2, 3}), Array::zeros({3, 4})), 2 * 2 * 4 * 3, 24 + 48 + 32);
  expect_cost(kernels::matmul(Array::zeros({5, 2, 3}), Array::zeros({5, 3, 4})), 5 * 2 * 2 * 4 * 3,
              120 + 240 + 160);
  expect_cost(kernels::matmul(Array::zeros({5, 2, 3}), Array::zeros({3, 4})), 5 * 2 * 2 * 4 * 3,
              120 + 48 + 160);
  expect_cost(kernels::dot(Array::zeros({7}, DType::bf16), Array::zeros({7}, DType::bf16)), 2 * 7,
              14 + 14 + 2);
}

// A transposed operand is read in place: the same FLOPs and bytes as the product of its transpose.
TEST(MatmulCost, ATransposedOperandIsReadInPlace) {
  expect_cost(kernels::matmul(Array::zeros({3, 2}), Array::zeros({3, 4}), {.a = true}), 2 * 2 * 4 * 3,
              24 + 48 + 32);
  expect_cost(kernels::matmul(Array::zeros({5, 2, 3}), Array::zeros({5, 4, 3}), {.b = true}),
              5 * 2 * 2 * 4 * 3, 120 + 240 + 160);
}

// ---------------------------------------------------------------------------------------------------------
// Reductions

TEST(Reduction, SumOverAxesAndAll) {
  Array a = iota({2, 3, 4});
  expect_array(sum(a), {}, DType::f32, {276});
  expect_array(sum(a, 0), {3, 4}, DType::f32, {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  expect_array(sum(a, 1), {2, 4}, DType::f32, {12, 15, 18, 21, 48, 51, 54, 57});
  expect_array(sum(a, -1), {2, 3}, DType::f32, {6, 22, 38, 54, 70, 86});
  expect_array(sum(a, -3, true), {1, 3, 4}, DType::f32, {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  expect_array(sum(a, std::nullopt, true), {1, 1, 1}, DType::f32, {276});
  expect_array(sum(Array::scalar(5)), {}, DType::f32, {5});
  expect_array(sum(Array::zeros({0, 3}), 0), {3}, DType::f32, {0, 0, 0});
}

TEST(Reduction, SumDtypesAsJax) {
  expect_array(sum(Array::from_values({3}, {1, 0, 1}, DType::boolean)), {}, DType::i32, {2});
  expect_array(sum(Array::from_values({2}, {3, -2}, DType::i32)), {}, DType::i32, {1});
  // jnp.sum of bf16 accumulates in float32: 1 + 300 * 2^-8 would stay 1 in bf16.
  std::vector<double> values(301, 0.00390625);
  values[0] = 1;
  expect_array(sum(Array::from_values({301}, values, DType::bf16)), {}, DType::bf16, {2.171875});
}

TEST(Reduction, Mean) {
  Array a = iota({2, 3});
  expect_array(mean(a), {}, DType::f32, {2.5});
  expect_array(mean(a, 0), {3}, DType::f32, {1.5, 2.5, 3.5});
  expect_array(mean(a, -1, true), {2, 1}, DType::f32, {1, 4});
  expect_array(mean(Array::from_values({2}, {3, -2}, DType::i32)), {}, DType::f32, {0.5});
  expect_array(mean(Array::from_values({2}, {1, 0}, DType::boolean)), {}, DType::f32, {0.5});
  expect_array(mean(Array::from_values({3}, {1.5, -2, 0.25}, DType::bf16)), {}, DType::bf16,
               {-0.08349609375});
  expect_array(mean(Array::zeros({0, 3})), {}, DType::f32, {kNaN});
  expect_array(mean(Array::zeros({0, 3}), 0), {3}, DType::f32, {kNaN, kNaN, kNaN});
}

TEST(Reduction, MaxAndMin) {
  Array a = f32({2, 3}, {1, 5, -2, 4, -7, 3});
  expect_array(max(a), {}, DType::f32, {5});
  expect_array(min(a), {}, DType::f32, {-7});
  expect_array(max(a, 0), {3}, DType::f32, {4, 5, 3});
  expect_array(min(a, 1, true), {2, 1}, DType::f32, {-2, -7});
  expect_array(max(a, -1), {2}, DType::f32, {5, 4});
  expect_array(max(Array::from_values({2}, {3, -2}, DType::i32)), {}, DType::i32, {3});
  expect_array(max(Array::from_values({2}, {1, 0}, DType::boolean)), {}, DType::boolean, {1});
  expect_array(min(Array::from_values({2}, {1, 0}, DType::boolean)), {}, DType::boolean, {0});
  expect_array(max(Array::from_values({2}, {1.5, -2}, DType::bf16)), {}, DType::bf16, {1.5});
  // Reducing a non-empty axis of an empty array is fine.
  expect_array(max(Array::zeros({0, 3}), 1), {0}, DType::f32, {});
}

TEST(Reduction, MaxAndMinPropagateNaN) {
  Array a = f32({2, 3}, {1, kNaN, 2, 3, 4, 5});
  expect_array(max(a), {}, DType::f32, {kNaN});
  expect_array(min(a), {}, DType::f32, {kNaN});
  expect_array(max(a, 0), {3}, DType::f32, {3, kNaN, 5});
  expect_array(min(a, 1), {2}, DType::f32, {kNaN, 3});
}

TEST(Reduction, ErrorsMatchJax) {
  Array a = Array::zeros({2, 3});
  EXPECT_ERROR(sum(a, 3), ValueError, "axis 3 is out of bounds for array of dimension 2");
  EXPECT_ERROR(sum(a, -3), ValueError, "axis -3 is out of bounds for array of dimension 2");
  EXPECT_ERROR(max(a, 3), ValueError, "axis 3 is out of bounds for array of dimension 2");
  EXPECT_ERROR(min(a, 2, true), ValueError, "axis 2 is out of bounds for array of dimension 2");
  // jnp.mean(a, axis=3) fails inside JAX with "tuple index out of range"; spmdsim gives numpy's message.
  EXPECT_ERROR(mean(a, 3), ValueError, "axis 3 is out of bounds for array of dimension 2");
  EXPECT_ERROR(sum(Array::scalar(1), 0), ValueError, "axis 0 is out of bounds for array of dimension 0");
  EXPECT_ERROR(max(Array::zeros({0, 3})), ValueError,
               "zero-size array to reduction operation max which has no identity");
  EXPECT_ERROR(min(Array::zeros({0, 3}), 0), ValueError,
               "zero-size array to reduction operation min which has no identity");
}

TEST(ReductionCost, ReadsInputWritesOutput) {
  Array a = Array::zeros({2, 3});
  expect_cost(kernels::sum(a, 0, false), 6, 24 + 12);
  expect_cost(kernels::mean(Array::zeros({2, 3}, DType::i32), std::nullopt, false), 6, 24 + 4);
  expect_cost(kernels::max(a, 1, true), 6, 24 + 8);
  expect_cost(kernels::sum(Array::zeros({8}, DType::boolean), std::nullopt, false), 8, 8 + 4);
}

// ---------------------------------------------------------------------------------------------------------
// Layout ops

TEST(Reshape, ResolvesMinusOneAndSharesStorage) {
  Array a = iota({2, 3});
  Array r = reshape(a, {3, -1});
  expect_array(r, {3, 2}, DType::f32, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(r.values<float>().data(), a.values<float>().data());
  expect_array(reshape(a, {-1}), {6}, DType::f32, {0, 1, 2, 3, 4, 5});
  expect_array(reshape(Array::scalar(7), {1, 1}), {1, 1}, DType::f32, {7});
  Array abstract = reshape(Array::abstract({4, 6}, DType::bf16), {2, -1, 3});
  EXPECT_TRUE(abstract.is_abstract());
  EXPECT_EQ(abstract.shape(), (Shape{2, 4, 3}));
}

TEST(Reshape, ErrorsMatchJax) {
  Array a = Array::zeros({2, 3});
  EXPECT_ERROR(reshape(a, {4, 2}), TypeError,
               "cannot reshape array of shape (2, 3) (size 6) into shape (4, 2) (size 8)");
  EXPECT_ERROR(reshape(a, {4, -1}), TypeError,
               "cannot reshape array of shape (2, 3) (size 6) into shape (4, -1) because the product "
               "of specified axis sizes (4) does not evenly divide 6");
  EXPECT_ERROR(reshape(a, {-1, -1}), TypeError,
               "can only specify one unknown axis size with a `-1` value, got (-1, -1)");
  EXPECT_ERROR(reshape(a, {-2, 3}), TypeError,
               "cannot reshape array of shape (2, 3) (size 6) into shape (-2, 3) (size -6)");
  EXPECT_ERROR(reshape(a, {-2, -3}), TypeError, "reshape new_sizes must all be positive, got (-2, -3).");
  EXPECT_ERROR(reshape(a, {-1, -2}), TypeError, "reshape new_sizes must all be positive, got (-3, -2).");
  // JAX raises ZeroDivisionError here; spmdsim keeps the TypeError wording.
  EXPECT_ERROR(reshape(Array::zeros({0, 3}), {-1, 0}), TypeError,
               "cannot reshape array of shape (0, 3) (size 0) into shape (-1, 0) because the product "
               "of specified axis sizes (0) does not evenly divide 0");
}

TEST(Transpose, DefaultReversesAxes) {
  Array a = iota({2, 3, 4});
  Array t = transpose(a);
  ASSERT_EQ(t.shape(), (Shape{4, 3, 2}));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k) EXPECT_EQ(t.item(k * 6 + j * 2 + i), a.item(i * 12 + j * 4 + k));
  expect_array(transpose(iota({2, 3})), {3, 2}, DType::f32, {0, 3, 1, 4, 2, 5});
  expect_array(transpose(Array::scalar(3)), {}, DType::f32, {3});
}

TEST(Transpose, ExplicitAndNegativeAxes) {
  Array a = iota({2, 3, 4}, DType::i32);
  expect_array(transpose(a, {1, -1, 0}), {3, 4, 2}, DType::i32,
               {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23});
  EXPECT_TRUE(array_equal(transpose(a, {0, 1, 2}), a));
}

TEST(Transpose, ErrorsMatchJax) {
  Array a = Array::zeros({2, 3});
  EXPECT_ERROR(transpose(a, {0, 0}), TypeError,
               "transpose permutation isn't a permutation of operand dimensions, got permutation "
               "(0, 0) for operand shape (2, 3).");
  EXPECT_ERROR(transpose(a, {0}), TypeError,
               "transpose permutation isn't a permutation of operand dimensions, got permutation "
               "(0,) for operand shape (2, 3).");
  EXPECT_ERROR(transpose(a, {-1, -1}), TypeError,
               "transpose permutation isn't a permutation of operand dimensions, got permutation "
               "(1, 1) for operand shape (2, 3).");
  EXPECT_ERROR(transpose(a, {0, 2}), ValueError, "axis 2 is out of bounds for array of dimension 2");
  EXPECT_ERROR(transpose(a, {0, 1, 2}), ValueError, "axis 2 is out of bounds for array of dimension 2");
}

TEST(Slice, ClampsAsNumpy) {
  Array v = Array::arange(5);
  expect_array(slice(v, 0, -10, 3), {3}, DType::i32, {0, 1, 2});
  expect_array(slice(v, 0, 4, 2), {0}, DType::i32, {});
  expect_array(slice(v, 0, -2, 100), {2}, DType::i32, {3, 4});
  expect_array(slice(v, -1, 1, -1), {3}, DType::i32, {1, 2, 3});
  Array m = iota({3, 4});
  expect_array(slice(m, 1, 1, 3), {3, 2}, DType::f32, {1, 2, 5, 6, 9, 10});
  expect_array(slice(m, -2, 2, 3), {1, 4}, DType::f32, {8, 9, 10, 11});
  EXPECT_ERROR(slice(m, 2, 0, 1), ValueError, "axis 2 is out of bounds for array of dimension 2");
}

TEST(Take, RemovesTheAxis) {
  Array m = iota({3, 4});
  expect_array(take(m, 0, 1), {4}, DType::f32, {4, 5, 6, 7});
  expect_array(take(m, 1, 2), {3}, DType::f32, {2, 6, 10});
  expect_array(take(m, -1, -1), {3}, DType::f32, {3, 7, 11});
  expect_array(take(m, 0, -3), {4}, DType::f32, {0, 1, 2, 3});
  expect_array(take(Array::arange(3), 0, 2), {}, DType::i32, {2});
}

TEST(Take, ErrorsMatchJax) {
  Array a = Array::zeros({2, 3});
  EXPECT_ERROR(take(a, 1, 5), IndexError, "index 5 is out of bounds for axis 1 with size 3");
  EXPECT_ERROR(take(a, 1, -4), IndexError, "index -4 is out of bounds for axis 1 with size 3");
  EXPECT_ERROR(take(a, -1, 5), IndexError, "index 5 is out of bounds for axis -1 with size 3");
  EXPECT_ERROR(take(a, 2, 0), ValueError, "axis 2 is out of bounds for array of dimension 2");
}

TEST(Concatenate, JoinsAlongAnAxis) {
  Array a = iota({2, 2});
  Array b = f32({2, 1}, {7, 8});
  expect_array(concatenate({a, b}, 1), {2, 3}, DType::f32, {0, 1, 7, 2, 3, 8});
  expect_array(concatenate({a, b}, -1), {2, 3}, DType::f32, {0, 1, 7, 2, 3, 8});
  expect_array(concatenate({a, transpose(b), a}), {5, 2}, DType::f32, {0, 1, 2, 3, 7, 8, 0, 1, 2, 3});
  expect_array(concatenate({Array::zeros({0, 2}), a}), {2, 2}, DType::f32, {0, 1, 2, 3});
  expect_array(concatenate({Array::full({2}, 1, DType::i32), Array::full({1}, 2.5, DType::bf16)}), {3},
               DType::bf16, {1, 1, 2.5});
}

TEST(Concatenate, ErrorsMatchJax) {
  EXPECT_ERROR(concatenate({}), ValueError, "Need at least one array to concatenate.");
  EXPECT_ERROR(concatenate({Array::scalar(1), Array::scalar(2)}), ValueError,
               "Zero-dimensional arrays cannot be concatenated.");
  EXPECT_ERROR(concatenate({Array::zeros({2, 3}), Array::zeros({2})}), TypeError,
               "Cannot concatenate arrays with different numbers of dimensions: got (2, 3), (2,).");
  EXPECT_ERROR(concatenate({Array::zeros({2}), Array::scalar(1)}), TypeError,
               "Cannot concatenate arrays with different numbers of dimensions: got (2,), ().");
  EXPECT_ERROR(concatenate({Array::zeros({2, 3}), Array::zeros({2, 4})}, 0), TypeError,
               "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
               "concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 4).");
  EXPECT_ERROR(concatenate({Array::zeros({2, 3}), Array::zeros({3, 3})}, -1), TypeError,
               "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
               "concatenated: concatenating along dimension 1 for shapes (2, 3), (3, 3).");
  EXPECT_ERROR(concatenate({Array::zeros({2, 3}), Array::zeros({2, 3})}, 2), ValueError,
               "axis 2 is out of bounds for array of dimension 2");
  EXPECT_ERROR(concatenate({Array::zeros({2, 3}), Array::zeros({2})}, 5), ValueError,
               "axis 5 is out of bounds for array of dimension 2");
}

TEST(Stack, InsertsANewAxis) {
  Array a = iota({2, 3});
  Array b = a * 10.0;
  expect_array(stack({a, b}), {2, 2, 3}, DType::f32, {0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50});
  expect_array(stack({a, b}, 1), {2, 2, 3}, DType::f32, {0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50});
  expect_array(stack({a, b}, -1), {2, 3, 2}, DType::f32, {0, 0, 1, 10, 2, 20, 3, 30, 4, 40, 5, 50});
  expect_array(stack({Array::scalar(1), Array::scalar(2, DType::i32)}), {2}, DType::f32, {1, 2});
}

TEST(Stack, ErrorsMatchJax) {
  EXPECT_ERROR(stack({}), ValueError, "Need at least one array to stack.");
  EXPECT_ERROR(stack({Array::zeros({2, 3}), Array::zeros({2, 4})}), ValueError,
               "All input arrays must have the same shape.");
  EXPECT_ERROR(stack({Array::zeros({2, 3}), Array::zeros({2, 3})}, 3), ValueError,
               "axis 3 is out of bounds for array of dimension 3");
  EXPECT_ERROR(stack({Array::zeros({2, 3}), Array::zeros({2})}, 5), ValueError,
               "axis 5 is out of bounds for array of dimension 3");
}

TEST(BroadcastTo, RepeatsNewAndUnitAxes) {
  expect_array(broadcast_to(f32({3}, {1, 2, 3}), {2, 3}), {2, 3}, DType::f32, {1, 2, 3, 1, 2, 3});
  expect_array(broadcast_to(f32({2, 1}, {1, 2}), {2, 2, 3}), {2, 2, 3}, DType::f32,
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  expect_array(broadcast_to(Array::scalar(4, DType::i32), {2}), {2}, DType::i32, {4, 4});
  expect_array(broadcast_to(iota({2, 3}), {2, 3}), {2, 3}, DType::f32, {0, 1, 2, 3, 4, 5});
}

TEST(BroadcastTo, ErrorsMatchJax) {
  EXPECT_ERROR(broadcast_to(Array::zeros({2, 3}), {4}), ValueError,
               "Cannot broadcast to shape with fewer dimensions: arr_shape=(2, 3) shape=(4,)");
  EXPECT_ERROR(broadcast_to(Array::zeros({2, 3}), {2, 4}), ValueError,
               "Incompatible shapes for broadcasting: (2, 3) and requested shape (2, 4)");
  EXPECT_ERROR(broadcast_to(Array::zeros({2, 3}), {-1, 3}), ValueError,
               "Incompatible shapes for broadcasting: (2, 3) and requested shape (-1, 3)");
  EXPECT_ERROR(broadcast_to(Array::zeros({1, 3}), {-1, 3}), TypeError,
               "broadcast_in_dim shape must have every element be nonnegative, got (-1, 3).");
}

TEST(LayoutCost, MovesBytesOnly) {
  Array a = Array::zeros({2, 3});
  expect_cost(kernels::transpose(a, {}), 0, 24 + 24);
  expect_cost(kernels::slice(a, 1, 0, 2), 0, 24 + 16);
  expect_cost(kernels::take(a, 0, 1), 0, 24 + 12);
  expect_cost(kernels::concatenate({a, Array::zeros({1, 3}, DType::bf16)}, 0), 0, 24 + 6 + 36);
  expect_cost(kernels::stack({a, a}, 0), 0, 48 + 48);
  expect_cost(kernels::broadcast_to(Array::zeros({3}), {4, 3}), 0, 12 + 48);
}

// ---------------------------------------------------------------------------------------------------------
// Abstract mode: every op gives the shape, dtype and cost it gives for real inputs.

struct AbstractCase {
  std::string name;
  std::vector<Array> inputs;
  std::function<kernels::KernelResult(const std::vector<Array>&)> kernel;
};

std::vector<AbstractCase> abstract_cases() {
  using In = const std::vector<Array>&;
  Array m = iota({2, 3});
  Array v = f32({3}, {1, 2, 3});
  Array h = Array::full({2, 3}, 1.5, DType::bf16);
  Array i = Array::full({2, 3}, 2, DType::i32);
  Array b = Array::full({3}, 1, DType::boolean);
  return {
      {"add", {m, v}, [](In x) { return kernels::add(x[0], x[1]); }},
      {"add scalar",
       {h, kernels::weak_scalar(2, DType::bf16)},
       [](In x) { return kernels::add(x[0], x[1]); }},
      {"subtract", {i, h}, [](In x) { return kernels::subtract(x[0], x[1]); }},
      {"multiply", {b, i}, [](In x) { return kernels::multiply(x[0], x[1]); }},
      {"divide", {i, i}, [](In x) { return kernels::divide(x[0], x[1]); }},
      {"maximum", {m, Array::scalar(0)}, [](In x) { return kernels::maximum(x[0], x[1]); }},
      {"minimum",
       {reshape(m, {2, 1, 3}), f32({4, 1}, {1, 2, 3, 4})},
       [](In x) { return kernels::minimum(x[0], x[1]); }},
      {"negative", {h}, [](In x) { return kernels::negative(x[0]); }},
      {"tanh", {i}, [](In x) { return kernels::tanh(x[0]); }},
      {"relu", {b}, [](In x) { return kernels::relu(x[0]); }},
      {"exp", {h}, [](In x) { return kernels::exp(x[0]); }},
      {"log", {m}, [](In x) { return kernels::log(x[0]); }},
      {"sqrt", {m}, [](In x) { return kernels::sqrt(x[0]); }},
      {"square", {b}, [](In x) { return kernels::square(x[0]); }},
      {"abs", {i}, [](In x) { return kernels::abs(x[0]); }},
      {"astype", {m}, [](In x) { return kernels::astype(x[0], DType::f16); }},
      {"matmul", {m, transpose(m)}, [](In x) { return kernels::matmul(x[0], x[1]); }},
      {"matmul batched", {iota({4, 2, 3}), v}, [](In x) { return kernels::matmul(x[0], x[1]); }},
      {"dot", {v, transpose(h)}, [](In x) { return kernels::dot(x[0], x[1]); }},
      {"dot scalar", {Array::scalar(2), m}, [](In x) { return kernels::dot(x[0], x[1]); }},
      {"sum", {b}, [](In x) { return kernels::sum(x[0], std::nullopt, false); }},
      {"mean", {i}, [](In x) { return kernels::mean(x[0], -1, true); }},
      {"max", {h}, [](In x) { return kernels::max(x[0], 0, false); }},
      {"min", {m}, [](In x) { return kernels::min(x[0], std::nullopt, true); }},
      {"transpose",
       {iota({2, 3, 4})},
       [](In x) {
         return kernels::transpose(x[0], {2, 0, 1});
       }},
      {"slice", {m}, [](In x) { return kernels::slice(x[0], 1, 1, 10); }},
      {"take", {m}, [](In x) { return kernels::take(x[0], -1, 2); }},
      {"concatenate", {m, i}, [](In x) { return kernels::concatenate(x, 0); }},
      {"stack", {m, h, m}, [](In x) { return kernels::stack(x, 2); }},
      {"broadcast_to",
       {v},
       [](In x) {
         return kernels::broadcast_to(x[0], {5, 2, 3});
       }},
  };
}

TEST(AbstractMode, EveryOpHasTheShapeDtypeAndCostOfRealInputs) {
  for (const AbstractCase& c : abstract_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Array> abstract_inputs;
    for (const Array& x : c.inputs) abstract_inputs.push_back(Array::abstract(x.shape(), x.dtype()));
    kernels::KernelResult real = c.kernel(c.inputs);
    kernels::KernelResult abstract = c.kernel(abstract_inputs);
    EXPECT_FALSE(real.value.is_abstract());
    EXPECT_TRUE(abstract.value.is_abstract());
    EXPECT_EQ(shape_str(abstract.value.shape()), shape_str(real.value.shape()));
    EXPECT_EQ(dtype_name(abstract.value.dtype()), dtype_name(real.value.dtype()));
    EXPECT_EQ(abstract.cost.flops, real.cost.flops);
    EXPECT_EQ(abstract.cost.bytes, real.cost.bytes);
    EXPECT_GT(real.cost.bytes, 0);
  }
}

TEST(AbstractMode, PublicOpsReturnAbstractArrays) {
  Array a = Array::abstract({2, 3}, DType::bf16);
  Array r = sum(matmul(a, transpose(a)) + 1.0, 0);
  EXPECT_TRUE(r.is_abstract());
  EXPECT_EQ(r.shape(), (Shape{2}));
  EXPECT_EQ(r.dtype(), DType::bf16);
}

TEST(AbstractMode, ShapeErrorsStillThrow) {
  Array a = Array::abstract({2, 3});
  EXPECT_ERROR(add(a, Array::abstract({4})), ValueError,
               "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]");
  EXPECT_ERROR(matmul(a, a), TypeError,
               "dot_general requires contracting dimensions to have the same shape, got (3,) and (2,).");
  EXPECT_ERROR(sum(a, 2), ValueError, "axis 2 is out of bounds for array of dimension 2");
}

}  // namespace
}  // namespace spmdsim
