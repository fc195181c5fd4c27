// Control flow as XLA runs it on a device: a conditional runs one branch, a while loop evaluates its
// condition on the device before every iteration, and a scan is a loop that reads row i of its xs and writes
// row i of its ys each iteration. The branch, the trip count and every iteration are the device's own: only
// what it runs is charged, op by op, through the callee programs (docs/python.md, "Control flow").
#include "control_flow.hpp"

#include <algorithm>
#include <optional>

#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::python {
namespace {

Arrays part(const Arrays& in, std::size_t first, std::size_t count) {
  return Arrays(in.begin() + static_cast<std::ptrdiff_t>(first),
                in.begin() + static_cast<std::ptrdiff_t>(first + count));
}

Arrays joined(Arrays front, const Arrays& back) {
  front.insert(front.end(), back.begin(), back.end());
  return front;
}

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

Shape row_shape(const Shape& stacked) {
  return Shape(stacked.begin() + 1, stacked.end());
}

// Row i of `stacked` along its leading axis, read as XLA's scan reads it each iteration: a dynamic_slice.
Array read_row(const Array& stacked, std::int64_t i) {
  const Shape shape = row_shape(stacked.shape());
  const double bytes =
      static_cast<double>(num_elements(shape)) * static_cast<double>(itemsize(stacked.dtype()));
  Array row = stacked.is_abstract() ? Array::abstract(shape, stacked.dtype())
                                    : Array::view(stacked, i * num_elements(shape), shape);
  return custom_op("dynamic_slice", OpCost{.flops = 0, .bytes = 2 * bytes}, std::move(row));
}

// One stacked output of a scan: XLA allocates it whole before the loop and each iteration writes its row in
// place (a dynamic_update_slice). The first write places the whole buffer, the others are charged with no
// buffer of their own; the rows' values are kept here and bound to that buffer at the end.
class StackedOutput {
 public:
  StackedOutput(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {}

  void write_row(std::int64_t i, const Array& row) {
    abstract_ = abstract_ || row.is_abstract() || leaves_abstract(shape_);
    if (!abstract_) {
      // Kept only for real rows: an abstract run's ys may be far larger than the host's memory.
      if (values_.empty()) values_.resize(static_cast<std::size_t>(num_elements(shape_)));
      const auto row_values = row.to_doubles();
      std::copy(row_values.begin(), row_values.end(),
                values_.begin() + i * static_cast<std::ptrdiff_t>(row_values.size()));
    }
    const OpCost cost{.flops = 0, .bytes = 2 * static_cast<double>(row.nbytes())};
    if (buffer_.has_value())
      custom_op("dynamic_update_slice", cost, Array::abstract({0}, dtype_));
    else
      buffer_ = custom_op("dynamic_update_slice", cost, Array::abstract(shape_, dtype_));
  }

  Array result() const {
    if (!buffer_.has_value()) return Array::zeros(shape_, dtype_);  // a scan of length 0
    if (abstract_) return *buffer_;
    return Array::from_values(shape_, values_, dtype_).on_device(buffer_->allocation());
  }

 private:
  Shape shape_;
  DType dtype_;
  bool abstract_ = false;
  std::optional<Array> buffer_;
  std::vector<double> values_;
};

}  // namespace

// in[0] the branch index (clamped, as XLA clamps it), then the operands; callees the branches. An abstract
// index runs ints[0], the branch the lowering found costliest: as XLA's cost analysis charges a conditional
// its costliest branch, an abstract run bounds the step from above.
Arrays cond_rule(const Arrays& in, const Instruction& ins) {
  const auto last = static_cast<std::int64_t>(ins.callees.size()) - 1;
  const std::int64_t branch =
      in[0].is_abstract() ? ins.ints.at(0)
                          : std::clamp(static_cast<std::int64_t>(in[0].item(0)), std::int64_t{0}, last);
  return ins.callees[count(branch)]->call(part(in, 1, in.size() - 1));
}

// in: the condition's constants (ints[0] of them), the body's (ints[1]), then the carry; callees the
// condition and the body.
Arrays while_rule(const Arrays& in, const Instruction& ins) {
  const auto cond_consts = count(ins.ints.at(0)), body_consts = count(ins.ints.at(1));
  const auto& condition = *ins.callees.at(0);
  const auto& body = *ins.callees.at(1);
  Arrays carry = part(in, cond_consts + body_consts, in.size() - cond_consts - body_consts);
  for (;;) {
    const Array go = condition.call(joined(part(in, 0, cond_consts), carry)).at(0);
    if (go.is_abstract())
      throw ValueError(
          "a while loop's condition depends on the arguments, which an abstract run has no values of, so its "
          "trip count is unknown; write the loop as lax.scan or lax.fori_loop with static bounds");
    if (go.item(0) == 0) return carry;
    carry = body.call(joined(part(in, cond_consts, body_consts), carry));
  }
}

// in: the body's constants (ints[0]), the initial carry (ints[1] values), then the xs; ints[2] the length,
// ints[3] reverse. The outputs: the final carry, then the ys stacked along a new leading axis.
Arrays scan_rule(const Arrays& in, const Instruction& ins) {
  const auto num_consts = count(ins.ints.at(0)), num_carry = count(ins.ints.at(1));
  const std::int64_t length = ins.ints.at(2);
  const bool reverse = ins.ints.at(3) != 0;
  const auto& body = *ins.callees.at(0);
  const Arrays consts = part(in, 0, num_consts);
  Arrays carry = part(in, num_consts, num_carry);
  const Arrays xs = part(in, num_consts + num_carry, in.size() - num_consts - num_carry);
  std::vector<StackedOutput> ys;
  for (std::size_t i = num_carry; i < ins.out_shapes.size(); ++i)
    ys.emplace_back(ins.out_shapes[i], ins.out_dtypes[i]);
  for (std::int64_t k = 0; k < length; ++k) {
    const std::int64_t i = reverse ? length - 1 - k : k;
    Arrays args = joined(consts, carry);
    for (const auto& x : xs) args.push_back(read_row(x, i));
    Arrays out = body.call(std::move(args));
    carry = part(out, 0, num_carry);
    for (std::size_t y = 0; y < ys.size(); ++y) ys[y].write_row(i, out[num_carry + y]);
  }
  for (const auto& y : ys) carry.push_back(y.result());
  return carry;
}

}  // namespace spmdsim::python
