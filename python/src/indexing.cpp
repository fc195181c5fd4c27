// Gather and scatter with XLA's semantics (https://openxla.org/xla/operation_semantics#gather), for the index
// vector in the indices' last dimension, where JAX puts it. Values are computed here; the cost is what XLA's
// kernels move: a gather reads the slices it gathers (not its whole operand: an embedding lookup touches only
// its rows), a scatter reads its updates and reads and writes the windows they land in, in place.
#include "indexing.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace spmdsim::python {
namespace {

// Instruction::ints[0]: how out-of-bounds indices are handled (lowering.py writes JAX's GatherScatterMode).
enum class Mode : std::int64_t { clip = 0, fill_or_drop = 1, promise_in_bounds = 2 };

bool contains(const std::vector<std::int64_t>& dims, std::size_t d) {
  return std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) != dims.end();
}

// The dimensions of `rank` that are in neither list, in order.
std::vector<std::size_t> dims_except(std::size_t rank, const std::vector<std::int64_t>& a,
                                     const std::vector<std::int64_t>& b) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < rank; ++d)
    if (!contains(a, d) && !contains(b, d)) dims.push_back(d);
  return dims;
}

std::int64_t flat_of(const std::vector<std::int64_t>& index, const std::vector<std::int64_t>& strides) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < index.size(); ++d) flat += index[d] * strides[d];
  return flat;
}

// Where one index vector of `indices` starts its window in the operand: `index_map[k]` is the operand
// dimension the vector's component k indexes; an operand batching dimension takes the batch position of the
// indices' matching dimension. `batch` is the position among the indices' leading (batch) dimensions.
struct WindowStart {
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> indexed;  // the operand dimensions the vector indexes
};

WindowStart window_start(const std::vector<double>& indices, const Shape& indices_shape,
                         const std::vector<std::int64_t>& batch, const std::vector<std::int64_t>& index_map,
                         const std::vector<std::int64_t>& operand_batching,
                         const std::vector<std::int64_t>& indices_batching, std::size_t operand_rank) {
  WindowStart w{std::vector<std::int64_t>(operand_rank, 0), index_map};
  const Shape batch_shape(indices_shape.begin(), indices_shape.end() - 1);
  const std::int64_t vector = flat_of(batch, strides_of(batch_shape)) * indices_shape.back();
  for (std::size_t k = 0; k < index_map.size(); ++k)
    w.start[static_cast<std::size_t>(index_map[k])] =
        static_cast<std::int64_t>(indices[static_cast<std::size_t>(vector) + k]);
  for (std::size_t i = 0; i < operand_batching.size(); ++i)
    w.start[static_cast<std::size_t>(operand_batching[i])] =
        batch[static_cast<std::size_t>(indices_batching[i])];
  return w;
}

// Clamps the indexed dimensions' starts so the window fits; whether they fitted before.
bool fit(WindowStart& w, const Shape& operand, const std::vector<std::int64_t>& window) {
  bool fitted = true;
  for (auto d64 : w.indexed) {
    const auto d = static_cast<std::size_t>(d64);
    const std::int64_t last = operand[d] - window[d];
    fitted = fitted && w.start[d] >= 0 && w.start[d] <= last;
    w.start[d] = std::clamp<std::int64_t>(w.start[d], 0, std::max<std::int64_t>(last, 0));
  }
  return fitted;
}

double bytes(const Shape& shape, DType dtype) {
  return static_cast<double>(num_elements(shape)) * static_cast<double>(itemsize(dtype));
}

Mode mode_of(const Instruction& ins) {
  return static_cast<Mode>(ins.ints.at(0));
}

using Combine = double (*)(double old, double update);

// How each scatter primitive combines an update with the operand's element.
Combine combine_of(const std::string& primitive) {
  static const std::map<std::string, Combine, std::less<>> combines = {
      {"scatter", [](double, double update) { return update; }},
      {"scatter-add", [](double old, double update) { return old + update; }},
      {"scatter-mul", [](double old, double update) { return old * update; }},
      {"scatter-min", [](double old, double update) { return std::min(old, update); }},
      {"scatter-max", [](double old, double update) { return std::max(old, update); }},
  };
  return combines.at(primitive);
}

}  // namespace

// in: operand, indices. groups: offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
// start_indices_batching_dims, slice_sizes. number: the fill value of FILL_OR_DROP.
Arrays gather_rule(const Arrays& in, const Instruction& ins) {
  const auto &offset_dims = ins.groups.at(0), &collapsed = ins.groups.at(1), &index_map = ins.groups.at(2),
             &operand_batching = ins.groups.at(3), &indices_batching = ins.groups.at(4),
             &slice_sizes = ins.groups.at(5);
  const Array &operand = in[0], &indices = in[1];
  const Shape& out_shape = ins.out_shapes[0];
  const OpCost cost{.flops = 0,
                    .bytes = static_cast<double>(indices.nbytes()) + 2 * bytes(out_shape, ins.out_dtypes[0])};
  return {charged(ins, in, cost, [&] {
    const auto operand_values = operand.to_doubles();
    const auto index_values = indices.to_doubles();
    const auto operand_strides = strides_of(operand.shape());
    const auto window_dims = dims_except(operand.shape().size(), collapsed, operand_batching);
    std::vector<double> out(static_cast<std::size_t>(num_elements(out_shape)));
    for (std::size_t e = 0; e < out.size(); ++e) {
      const auto at = index_of(static_cast<std::int64_t>(e), out_shape);
      std::vector<std::int64_t> batch;
      for (std::size_t d = 0; d < at.size(); ++d)
        if (!contains(offset_dims, d)) batch.push_back(at[d]);
      auto w = window_start(index_values, indices.shape(), batch, index_map, operand_batching,
                            indices_batching, operand.shape().size());
      const bool fitted = fit(w, operand.shape(), slice_sizes);
      if (!fitted && mode_of(ins) == Mode::fill_or_drop) {
        out[e] = ins.number;
        continue;
      }
      for (std::size_t k = 0; k < window_dims.size(); ++k)
        w.start[window_dims[k]] += at[static_cast<std::size_t>(offset_dims[k])];
      out[e] = operand_values[static_cast<std::size_t>(flat_of(w.start, operand_strides))];
    }
    return out;
  })};
}

// in: operand, indices, updates. groups: update_window_dims, inserted_window_dims,
// scatter_dims_to_operand_dims, operand_batching_dims, scatter_indices_batching_dims. Updates whose window
// does not fit are dropped (XLA's semantics) unless the mode is CLIP, which moves the window inside.
Arrays scatter_rule(const Arrays& in, const Instruction& ins) {
  const auto &window_update_dims = ins.groups.at(0), &inserted = ins.groups.at(1),
             &index_map = ins.groups.at(2), &operand_batching = ins.groups.at(3),
             &indices_batching = ins.groups.at(4);
  const Array &operand = in[0], &indices = in[1], &updates = in[2];
  const Combine combine = combine_of(ins.primitive);
  const bool combines = ins.primitive != "scatter";
  const double update_bytes = static_cast<double>(updates.nbytes());
  const OpCost cost{.flops = combines ? static_cast<double>(updates.size()) : 0,
                    .bytes = static_cast<double>(indices.nbytes()) + update_bytes * (combines ? 3 : 2)};
  return {charged(ins, in, cost, [&] {
    auto out = operand.to_doubles();
    const auto index_values = indices.to_doubles();
    const auto update_values = updates.to_doubles();
    const auto operand_strides = strides_of(operand.shape());
    const auto window_dims = dims_except(operand.shape().size(), inserted, operand_batching);
    std::vector<std::int64_t> window(operand.shape().size(), 1);
    for (std::size_t k = 0; k < window_dims.size(); ++k)
      window[window_dims[k]] = updates.shape()[static_cast<std::size_t>(window_update_dims[k])];
    for (std::size_t e = 0; e < update_values.size(); ++e) {
      const auto at = index_of(static_cast<std::int64_t>(e), updates.shape());
      std::vector<std::int64_t> batch;
      for (std::size_t d = 0; d < at.size(); ++d)
        if (!contains(window_update_dims, d)) batch.push_back(at[d]);
      auto w = window_start(index_values, indices.shape(), batch, index_map, operand_batching,
                            indices_batching, operand.shape().size());
      if (!fit(w, operand.shape(), window) && mode_of(ins) != Mode::clip) continue;
      for (std::size_t k = 0; k < window_dims.size(); ++k)
        w.start[window_dims[k]] += at[static_cast<std::size_t>(window_update_dims[k])];
      auto& target = out[static_cast<std::size_t>(flat_of(w.start, operand_strides))];
      target = combine(target, update_values[e]);
    }
    return out;
  })};
}

}  // namespace spmdsim::python
