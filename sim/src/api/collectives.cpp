// The jax.lax collectives: JAX's shape rules and errors, around the configured algorithm of each kind.
#include "spmdsim/collectives.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xbt/log.h>
#include <simgrid/s4u/Engine.hpp>

#include "api/collective_calls.hpp"
#include "api/kernels/kernels.hpp"
#include "collectives/algorithms.hpp"
#include "collectives/call_communicator.hpp"
#include "collectives/cost_inputs.hpp"
#include "collectives/nccl_protocols.hpp"
#include "collectives/selection.hpp"
#include "collectives/simulated_waits.hpp"
#include "engine/device_context.hpp"
#include "engine/program_record.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_coll);

namespace spmdsim {

std::string AxisName::str() const {
  if (!tuple_) return names_.front();
  std::vector<std::string> quoted;
  for (const auto& name : names_) quoted.push_back(fmt::format("'{}'", name));
  return quoted.size() == 1 ? fmt::format("({},)", quoted.front())
                            : fmt::format("({})", fmt::join(quoted, ", "));
}

}  // namespace spmdsim

namespace spmdsim::detail {

DeviceContext& device_for(const AxisName& axis_name) {
  DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) throw NameError(fmt::format("unbound axis name: {}", axis_name.names().front()));
  ctx->axis_levels(axis_name);  // NameError for a name the call did not bind
  if (ctx->recorder() != nullptr) throw NotReplayable("a collective other than psum, pmean, pmax and pmin");
  return *ctx;
}

AxisGroup my_group(const AxisGroup& axis, const AxisIndexGroups& groups) {
  if (groups.empty()) return axis;
  std::vector<int> seen;
  for (const auto& g : groups) seen.insert(seen.end(), g.begin(), g.end());
  std::sort(seen.begin(), seen.end());
  std::vector<int> expected(static_cast<std::size_t>(axis.size()));
  std::iota(expected.begin(), expected.end(), 0);
  if (seen != expected) throw ValueError("axis_index_groups must cover all indices exactly once");
  for (const auto& g : groups)
    if (g.size() != groups.front().size()) throw ValueError("axis_index_groups must all be the same size");
  for (const auto& g : groups)
    if (const auto mine = std::find(g.begin(), g.end(), axis.position); mine != g.end()) {
      std::vector<int> ranks;
      for (int index : g) ranks.push_back(axis.ranks()[static_cast<std::size_t>(index)]);
      return {std::make_shared<const GroupRanks>(std::move(ranks)), static_cast<int>(mine - g.begin())};
    }
  throw std::logic_error("unreachable: every axis index is in a group");
}

AxisGroup my_group(const DeviceContext& ctx, const AxisName& axis_name, const AxisIndexGroups& groups) {
  return my_group(ctx.axis_group(axis_name), groups);
}

}  // namespace spmdsim::detail

namespace spmdsim {
namespace {

using detail::AxisGroup;
using detail::device_for;
using detail::DeviceCommunicator;
using detail::DeviceContext;
using detail::my_group;

// Times one collective on this device: its whole span counts as communication under its name (on the
// stream's track when the stream runs it).
class CollectiveSpan {
 public:
  CollectiveSpan(DeviceContext& ctx, std::string name)
      : ctx_(ctx), name_(std::move(name)), start_((ctx.flush_compute(), simgrid::s4u::Engine::get_clock())) {}
  ~CollectiveSpan() { ctx_.record_communication(name_, start_, simgrid::s4u::Engine::get_clock()); }
  CollectiveSpan(const CollectiveSpan&) = delete;
  CollectiveSpan& operator=(const CollectiveSpan&) = delete;

 private:
  DeviceContext& ctx_;
  std::string name_;
  Seconds start_;
};

// A collective is one kernel on each device of its group (NCCL's, or XLA's collective thunk) and pays the
// device's launch, as every kernel does (§K.7). A group of one device exchanges nothing: XLA drops the
// collective.
void launch_collective_kernel(const DeviceContext& ctx, int group_size) {
  if (group_size > 1) detail::wait_for(ctx.spec().launch_overhead);
}

// The platform's logical shape applies when the group is every device in platform order.
std::vector<int> group_dimensions(const DeviceContext& ctx, const AxisGroup& group) {
  const bool platform_prefix = group.members->in_call_order && ctx.call().devices_in_platform_order;
  return platform_prefix ? ctx.runtime().platform().first_devices_shape(group.size())
                         : std::vector<int>{group.size()};
}

// The simulation's channel count, or (0) group_ring_channels.
int call_channels(const detail::Runtime& runtime, const std::vector<int>& dimensions) {
  if (runtime.collectives().channels() > 0) return runtime.collectives().channels();
  return group_ring_channels(runtime.platform(), dimensions);
}

// One collective on this device: its span in the report, its communicator, and the algorithm chosen for it.
class CollectiveCall {
 public:
  CollectiveCall(DeviceContext& ctx, AxisGroup group, const char* name, CollectiveKind kind,
                 const CollectiveOptions& options, double bytes, DType dtype)
      : ctx_(ctx), name_(name), label_(name), span_(ctx, name) {
    const auto& runtime = ctx.runtime();
    algorithm_ = options.algorithm.empty() ? runtime.collectives().algorithm(kind) : options.algorithm;
    const char* chosen_by = options.algorithm.empty() ? "the simulation's" : "the call's";
    if (algorithm_ == "auto") {
      algorithm_ =
          collectives::choose_algorithm(kind, collectives::cost_inputs(ctx, group.ranks(), bytes, dtype));
      chosen_by = "auto's lowest closed form";
    }
    XBT_VERB("%s on device %d: %d ranks, %.0f bytes, algorithm '%s' (%s)", name, ctx.device(), group.size(),
             bytes, algorithm_.c_str(), chosen_by);
    check_device_count(kind, algorithm_, group.size());
    if (options.pipeline_chunks < 0)
      throw ValueError(fmt::format("pipeline_chunks must be at least 1, or 0 for the simulation's (got {})",
                                   options.pipeline_chunks));
    const int chunks =
        options.pipeline_chunks > 0 ? options.pipeline_chunks : runtime.collectives().pipeline_chunks();
    if (options.channels < 0)
      throw ValueError(
          fmt::format("channels must be at least 1, or 0 for the simulation's (got {})", options.channels));
    auto dimensions = group_dimensions(ctx, group);
    const int channels = options.channels > 0 ? options.channels : call_channels(runtime, dimensions);
    auto per_dimension = options.dimension_algorithms.empty() ? runtime.collectives().dimension_algorithms()
                                                              : options.dimension_algorithms;
    if (algorithm_ == "multidim" && !per_dimension.empty())
      check_dimension_algorithms(per_dimension, dimensions);
    else
      per_dimension.clear();  // the ring along every dimension
    if (!options.protocol.empty()) collectives::parse_nccl_protocol(options.protocol);
    comm_ = detail::call_communicator(
        ctx, std::move(group), name, chunks, std::move(dimensions), std::move(per_dimension), channels,
        options.protocol.empty() ? runtime.collectives().protocol() : options.protocol);
    launch_collective_kernel(ctx, comm_->size());
  }

  Communicator& comm() { return *comm_; }
  const std::string& algorithm() const { return algorithm_; }
  // Waits for this device's last sends and places the results in its memory.
  std::vector<Array> finish(const std::vector<Array>& results) {
    comm_->finish();
    XBT_VERB("%s on device %d ends", name_, ctx_.device());
    std::vector<Array> placed;
    placed.reserve(results.size());
    for (const Array& result : results) placed.push_back(ctx_.place(result, MemoryTag::temporaries, label_));
    return placed;
  }
  Array finish(const Array& result) { return finish(std::vector<Array>{result}).front(); }

 private:
  DeviceContext& ctx_;
  const char* name_;
  MemoryLabel label_;  // the results' buffers', interned once for all of them
  CollectiveSpan span_;
  std::unique_ptr<DeviceCommunicator> comm_;
  std::string algorithm_;
};

int canonical_axis(int axis, std::int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(fmt::format("axis {} is out of bounds for array of dimension {}", axis, ndim));
  return axis < 0 ? static_cast<int>(axis + ndim) : axis;
}

// The blocks of x along `dimension`, one per rank: x[j] (the dimension removed) untiled, the j-th
// contiguous slice tiled.
std::vector<Array> blocks_along(const Array& x, int dimension, int count, bool tiled) {
  std::vector<Array> blocks;
  const std::int64_t width = x.shape()[static_cast<std::size_t>(dimension)] / count;
  for (int j = 0; j < count; ++j)
    blocks.push_back(tiled ? kernels::slice(x, dimension, j * width, (j + 1) * width).value
                           : kernels::take(x, dimension, j).value);
  return blocks;
}

// The shape `count` pieces shaped `piece` take joined along `axis` (as assemble joins them).
Shape gathered_shape(Shape piece, int count, int axis, bool tiled) {
  if (tiled)
    piece[static_cast<std::size_t>(axis)] *= count;
  else
    piece.insert(piece.begin() + axis, count);
  return piece;
}

// Pieces in rank order joined along `axis`: stacked on a new axis untiled, concatenated tiled.
Array assemble(const std::vector<Array>& pieces, int axis, bool tiled) {
  return tiled ? kernels::concatenate(pieces, axis).value : kernels::stack(pieces, axis).value;
}

Array permute(const Array& x, const AxisName& axis_name, const std::vector<std::pair<int, int>>& perm,
              const char* name) {
  DeviceContext& ctx = device_for(axis_name);
  const AxisGroup axis = ctx.axis_group(axis_name);
  std::set<int> sources, destinations;
  for (auto [src, dst] : perm) {
    for (int index : {src, dst})
      if (index < 0 || index >= axis.size())
        throw IndexError(fmt::format("{} index {} out of range for axis size {}", name, index, axis.size()));
    sources.insert(src);
    destinations.insert(dst);
  }
  if (sources.size() != perm.size() || destinations.size() != perm.size()) {
    std::vector<std::string> pairs;
    for (auto [src, dst] : perm) pairs.push_back(fmt::format("({}, {})", src, dst));
    throw ValueError(fmt::format("ppermute sources and destinations must be unique, got ({}{}).",
                                 fmt::join(pairs, ", "), pairs.size() == 1 ? "," : ""));
  }
  CollectiveSpan span(ctx, name);
  launch_collective_kernel(ctx, axis.size());
  DeviceCommunicator comm(ctx, axis, name, 1, {axis.size()});
  std::optional<Array> received;
  for (auto [src, dst] : perm)
    if (src == axis.position) comm.send(dst, x);
  for (auto [src, dst] : perm)
    if (dst == axis.position) received = comm.recv(src);
  comm.finish();
  if (received) return ctx.place(*received, MemoryTag::temporaries, name);
  return ctx.place(x.is_abstract() ? x : Array::zeros(x.shape(), x.dtype()), MemoryTag::temporaries, name);
}

// The operands end to end, flattened: the one buffer a multi-operand all-reduce reduces.
Array joined_flat(const std::vector<Array>& operands) {
  if (operands.size() == 1) return operands.front().reshaped(Shape{operands.front().size()});
  std::int64_t total = 0;
  for (const Array& x : operands) total += x.size();
  if (operands.front().is_abstract()) return Array::abstract(Shape{total}, operands.front().dtype());
  std::vector<Array> flats;
  flats.reserve(operands.size());
  for (const Array& x : operands) flats.push_back(x.reshaped(Shape{x.size()}));
  return kernels::concatenate(flats, 0).value;
}

// joined_flat undone: `flat` cut into arrays shaped as the operands.
std::vector<Array> split_like(const Array& flat, const std::vector<Array>& operands) {
  if (operands.size() == 1) return {flat.reshaped(operands.front().shape())};
  std::vector<Array> parts;
  parts.reserve(operands.size());
  std::int64_t offset = 0;
  for (const Array& x : operands) {
    parts.push_back(Array::view(flat, offset, x.shape()));
    offset += x.size();
  }
  return parts;
}

// jax.lax.psum sums booleans as int32 (it converts them first); max and min keep bool.
std::vector<Array> summable(const std::vector<Array>& operands, ReduceOp op) {
  if (op != ReduceOp::sum) return operands;
  std::vector<Array> out;
  for (const Array& x : operands) out.push_back(x.dtype() == DType::boolean ? astype(x, DType::i32) : x);
  return out;
}

std::vector<Array> all_reduce_operands(const std::vector<Array>& given, const AxisName& axis_name,
                                       const AxisIndexGroups& groups, ReduceOp op, const char* name,
                                       const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  const std::vector<Array> operands = summable(given, op);
  const Array flat = joined_flat(operands);
  CollectiveCall call(ctx, my_group(ctx, axis_name, groups), name, CollectiveKind::all_reduce, options,
                      static_cast<double>(flat.nbytes()), flat.dtype());
  const auto& algorithm = find_all_reduce(call.algorithm());
  const Array reduced = algorithm.booked != nullptr && call.comm().books_phases()
                            ? algorithm.booked(call.comm(), flat, op)
                            : algorithm.run(call.comm(), flat, op);
  return call.finish(split_like(reduced, operands));
}

// all_gather of every operand alike (same axis, tiled or not) as one collective over their joined buffer.
std::vector<Array> all_gather_operands(const std::vector<Array>& operands, const AxisGroup& axis_group,
                                       int axis, bool tiled, const AxisIndexGroups& groups,
                                       const CollectiveOptions& options) {
  DeviceContext& ctx = *detail::current_device();
  auto group = my_group(axis_group, groups);
  const int count = static_cast<int>(group.size());
  std::vector<int> out_axes;
  for (const Array& x : operands) out_axes.push_back(canonical_axis(axis, x.ndim() + (tiled ? 0 : 1)));
  const Array flat = joined_flat(operands);
  const double gathered = static_cast<double>(flat.nbytes()) * count;
  CollectiveCall call(ctx, std::move(group), "all_gather", CollectiveKind::all_gather, options, gathered,
                      flat.dtype());
  std::vector<Array> results;
  const auto& algorithm = find_all_gather(call.algorithm());
  if (algorithm.booked != nullptr && call.comm().books(flat)) {
    const Array others = algorithm.booked(call.comm(), flat);  // held until placed
    for (std::size_t i = 0; i < operands.size(); ++i)
      results.push_back(Array::abstract(gathered_shape(operands[i].shape(), count, out_axes[i], tiled),
                                        operands[i].dtype()));
    return call.finish(results);
  }
  std::vector<std::vector<Array>> by_rank;  // each rank's piece, cut back into its operands
  for (const Array& piece : algorithm.run(call.comm(), flat)) by_rank.push_back(split_like(piece, operands));
  for (std::size_t i = 0; i < operands.size(); ++i) {
    std::vector<Array> pieces;
    for (const auto& parts : by_rank) pieces.push_back(parts[i]);
    results.push_back(assemble(pieces, out_axes[i], tiled));
  }
  return call.finish(results);
}

// psum_scatter of every operand alike as one reduce-scatter: rank j's block is every operand's j-th block,
// joined.
std::vector<Array> psum_scatter_operands(const std::vector<Array>& operands, const AxisName& axis_name,
                                         int scatter_dimension, bool tiled, const AxisIndexGroups& groups,
                                         const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  auto group = my_group(ctx, axis_name, groups);
  const int shards = static_cast<int>(group.size());
  std::vector<int> dims;
  std::vector<Array> block_shapes;  // abstract, one per operand: what each rank gets of it
  double bytes = 0;
  for (const Array& x : operands) {
    if (x.dtype() == DType::boolean)  // jax.lax.psum_scatter does not convert booleans, as psum does
      throw TypeError(
          "add does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of "
          "integer, "
          "floating, complexfloating.");
    const int dim = canonical_axis(scatter_dimension, x.ndim());
    const std::int64_t size = x.shape()[static_cast<std::size_t>(dim)];
    if (!tiled && size != shards)
      throw ValueError(fmt::format(
          "reduce_scatter operand scatter dimension size {} must match shard count {}", size, shards));
    if (tiled && size % shards != 0)
      throw ValueError(fmt::format(
          "tiled reduce_scatter operand scatter dimension size {} must be divisible by shard_count {}", size,
          shards));
    Shape block = x.shape();
    block[static_cast<std::size_t>(dim)] /= shards;
    if (!tiled) block.erase(block.begin() + dim);
    dims.push_back(dim);
    block_shapes.push_back(Array::abstract(block, x.dtype()));
    bytes += static_cast<double>(x.nbytes());
  }
  const Array joined_block = joined_flat(block_shapes);
  CollectiveCall call(ctx, std::move(group), "psum_scatter", CollectiveKind::reduce_scatter, options, bytes,
                      joined_block.dtype());
  const auto& algorithm = find_reduce_scatter(call.algorithm());
  if (algorithm.booked != nullptr && call.comm().books(operands.front()))  // joined_block is always abstract
    return call.finish(split_like(algorithm.booked(call.comm(), joined_block, ReduceOp::sum), block_shapes));
  std::vector<std::vector<Array>> blocks(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i)
    blocks[i] = blocks_along(operands[i], dims[i], shards, tiled);
  std::vector<Array> rank_blocks;
  for (int j = 0; j < shards; ++j) {
    std::vector<Array> parts;
    for (const auto& operand_blocks : blocks) parts.push_back(operand_blocks[static_cast<std::size_t>(j)]);
    rank_blocks.push_back(joined_flat(parts));
  }
  const Array mine = algorithm.run(call.comm(), rank_blocks, ReduceOp::sum);
  return call.finish(split_like(mine, block_shapes));
}

// The most elements one call over a tree joins: DeepSpeed's default reduce and all-gather bucket (5e8
// elements). A joined ring holds pieces of its whole buffer as scratch, so the cap bounds that scratch.
constexpr std::int64_t kMaxJoinedElements = 500'000'000;

// A tree's leaves as the calls that reduce or gather them: the leaves of one dtype in tree order, cut where a
// call would join more than max_elements (a larger leaf is a call of its own).
std::vector<std::vector<std::size_t>> joined_calls(const detail::CollectiveLeaves& leaves,
                                                   std::int64_t max_elements) {
  std::vector<std::vector<std::size_t>> calls;
  std::vector<bool> assigned(leaves.size(), false);
  for (std::size_t first = 0; first < leaves.size(); ++first) {
    if (assigned[first]) continue;
    std::int64_t joined = 0;
    calls.emplace_back();
    for (std::size_t i = first; i < leaves.size(); ++i) {
      if (assigned[i] || leaves.like(i).dtype() != leaves.like(first).dtype()) continue;
      if (!calls.back().empty() && joined + leaves.like(i).size() > max_elements) {
        calls.emplace_back();
        joined = 0;
      }
      assigned[i] = true;
      calls.back().push_back(i);
      joined += leaves.like(i).size();
    }
  }
  return calls;
}

// A collective over a pytree, as XLA runs it: the leaves of each call of joined_calls go to `run` together as
// the operands of one multi-operand collective, as a psum bound on many leaves at once runs as one all-reduce
// and XLA's combiners join the all-gathers and reduce-scatters a tree_map makes. 389 gradients then pay a
// few collectives' latencies, not 389. A leaf is an array only while its call runs (CollectiveLeaves says
// why).
template <class RunOperands>
std::vector<Array> per_joined_call(detail::CollectiveLeaves leaves, std::int64_t max_elements,
                                   const RunOperands& run) {
  for (const std::vector<std::size_t>& call : joined_calls(leaves, max_elements)) {
    std::vector<Array> operands;
    operands.reserve(call.size());
    for (std::size_t i : call) operands.push_back(leaves.take(i));
    // The call's handles go once it returns.
    std::vector<Array> outputs = run(std::move(operands));
    for (std::size_t j = 0; j < call.size(); ++j) leaves.keep_result(call[j], std::move(outputs[j]));
  }
  return std::move(leaves).results();
}

}  // namespace

namespace detail {

Array all_gather(const Array& x, const AxisGroup& axis, int out_axis) {
  return all_gather_operands({x}, axis, out_axis, false, {}, {}).front();
}

Array all_reduce(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups, ReduceOp op,
                 const char* name, const CollectiveOptions& options) {
  return all_reduce_operands(std::vector<Array>{x}, axis_name, groups, op, name, options).front();
}

Array mean_of_sum(const Array& total, double count) {
  return is_floating(total.dtype()) ? total / count : astype(total, DType::f32) / count;
}

}  // namespace detail

using detail::all_reduce;

namespace {

// A reduction whose results have its operands' shapes, `reduce` taking the leaves of `x` to theirs: run on
// the device, or, while the device's program is recorded (program_record.hpp), written down to be run again
// on each device. A name the call did not bind is a NameError either way.
template <class Operand, class Reduce>
Operand reduced(const Operand& x, const AxisName& axis_name, const Reduce& reduce) {
  std::vector<Array> leaves;
  if constexpr (std::is_same_v<Operand, Array>)
    leaves.push_back(x);
  else
    leaves = x.leaves();
  std::vector<Array> results;
  if (detail::ProgramRecorder* recorder = detail::current_recorder(); recorder == nullptr) {
    results = reduce(detail::CollectiveLeaves(std::move(leaves)));
  } else {
    const detail::DeviceContext& ctx = *detail::current_device();
    ctx.axis_levels(axis_name);
    results = recorder->collective(ctx, leaves, reduce);
  }
  if constexpr (std::is_same_v<Operand, Array>)
    return std::move(results.front());
  else
    return x.rebuild(results);
}

double group_size(const AxisName& axis_name, const AxisIndexGroups& groups) {
  return static_cast<double>(my_group(device_for(axis_name), axis_name, groups).size());
}

}  // namespace

Array psum(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
           const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operand) {
    return std::vector{all_reduce(operand.take(0), axis_name, groups, ReduceOp::sum, "psum", options)};
  });
}

Array pmean(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
            const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operand) {
    Array total = all_reduce(operand.take(0), axis_name, groups, ReduceOp::sum, "pmean", options);
    return std::vector{detail::mean_of_sum(total, group_size(axis_name, groups))};
  });
}

Array pmax(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
           const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operand) {
    return std::vector{all_reduce(operand.take(0), axis_name, groups, ReduceOp::max, "pmax", options)};
  });
}

Array pmin(const Array& x, const AxisName& axis_name, const AxisIndexGroups& groups,
           const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operand) {
    return std::vector{all_reduce(operand.take(0), axis_name, groups, ReduceOp::min, "pmin", options)};
  });
}

Tree psum(const Tree& x, const AxisName& axis_name, const AxisIndexGroups& groups,
          const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operands) {
    return per_joined_call(std::move(operands), kMaxJoinedElements, [&](const std::vector<Array>& joined) {
      return all_reduce_operands(joined, axis_name, groups, ReduceOp::sum, "psum", options);
    });
  });
}

Tree pmean(const Tree& x, const AxisName& axis_name, const AxisIndexGroups& groups,
           const CollectiveOptions& options) {
  return reduced(x, axis_name, [=](detail::CollectiveLeaves operands) {
    const double count = group_size(axis_name, groups);
    return per_joined_call(std::move(operands), kMaxJoinedElements, [&](const std::vector<Array>& joined) {
      std::vector<Array> totals =
          all_reduce_operands(joined, axis_name, groups, ReduceOp::sum, "pmean", options);
      for (Array& total : totals)
        total = detail::mean_of_sum(total, count);  // each sum released once divided
      return totals;
    });
  });
}

Array all_gather(const Array& x, const AxisName& axis_name, int axis, bool tiled,
                 const AxisIndexGroups& groups, const CollectiveOptions& options) {
  return all_gather_operands({x}, device_for(axis_name).axis_group(axis_name), axis, tiled, groups, options)
      .front();
}

Tree all_gather(const Tree& x, const AxisName& axis_name, int axis, bool tiled, const AxisIndexGroups& groups,
                const CollectiveOptions& options) {
  // The cap is on what each call gathers, which is what the ring's pieces hold.
  const auto count = static_cast<std::int64_t>(my_group(device_for(axis_name), axis_name, groups).size());
  return x.rebuild(per_joined_call(
      detail::CollectiveLeaves(x.leaves()), kMaxJoinedElements / count,
      [&](const std::vector<Array>& operands) {
        return all_gather_operands(operands, device_for(axis_name).axis_group(axis_name), axis, tiled, groups,
                                   options);
      }));
}

Array psum_scatter(const Array& x, const AxisName& axis_name, int scatter_dimension, bool tiled,
                   const AxisIndexGroups& groups, const CollectiveOptions& options) {
  return psum_scatter_operands({x}, axis_name, scatter_dimension, tiled, groups, options).front();
}

Tree psum_scatter(const Tree& x, const AxisName& axis_name, int scatter_dimension, bool tiled,
                  const AxisIndexGroups& groups, const CollectiveOptions& options) {
  return x.rebuild(per_joined_call(
      detail::CollectiveLeaves(x.leaves()), kMaxJoinedElements, [&](const std::vector<Array>& operands) {
        return psum_scatter_operands(operands, axis_name, scatter_dimension, tiled, groups, options);
      }));
}

Array ppermute(const Array& x, const AxisName& axis_name, const std::vector<std::pair<int, int>>& perm) {
  return permute(x, axis_name, perm, "ppermute");
}

Array pshuffle(const Array& x, const AxisName& axis_name, const std::vector<int>& perm) {
  auto sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expected(perm.size());
  std::iota(expected.begin(), expected.end(), 0);
  if (sorted != expected)
    throw ValueError(fmt::format("`perm` does not represent a permutation: [{}]", fmt::join(perm, ", ")));
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < perm.size(); ++i) pairs.emplace_back(perm[i], static_cast<int>(i));
  return permute(x, axis_name, pairs, "pshuffle");
}

Array all_to_all(const Array& x, const AxisName& axis_name, int split_axis, int concat_axis, bool tiled,
                 const AxisIndexGroups& groups, const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  auto group = my_group(ctx, axis_name, groups);
  const int count = static_cast<int>(group.size());
  const int split = canonical_axis(split_axis, x.ndim());
  const std::int64_t size = x.shape()[static_cast<std::size_t>(split)];
  if (!tiled && size != count)
    throw ValueError(
        fmt::format("all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], "
                    "but they are {} "
                    "and {} respectively.",
                    count, size));
  if (tiled && size % count != 0)
    throw ValueError(fmt::format(
        "The size of all_to_all split_axis ({}) has to be divisible by the size of the named axis {} ({})",
        size, axis_name.str(), count));
  const int concat = canonical_axis(concat_axis, x.ndim());
  CollectiveCall call(ctx, std::move(group), "all_to_all", CollectiveKind::all_to_all, options,
                      static_cast<double>(x.nbytes()), x.dtype());
  auto received = find_all_to_all(call.algorithm()).run(call.comm(), blocks_along(x, split, count, tiled));
  return call.finish(assemble(received, concat, tiled));
}

Array axis_index(const AxisName& axis_name) {
  DeviceContext& ctx = device_for(axis_name);
  return ctx.place(Array::scalar(ctx.axis_group(axis_name).position, DType::i32), MemoryTag::temporaries,
                   "axis_index");
}

Array broadcast(const Array& x, const AxisName& axis_name, int root, const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  const AxisGroup axis = ctx.axis_group(axis_name);
  if (root < 0 || root >= axis.size())
    throw IndexError(fmt::format("broadcast root {} out of range for axis size {}", root, axis.size()));
  CollectiveCall call(ctx, axis, "broadcast", CollectiveKind::broadcast, options,
                      static_cast<double>(x.nbytes()), x.dtype());
  Array out = find_broadcast(call.algorithm()).run(call.comm(), x.reshaped(Shape{x.size()}), root);
  return call.finish(out.reshaped(x.shape()));
}

Array reduce(const Array& x, const AxisName& axis_name, int root, const CollectiveOptions& options) {
  DeviceContext& ctx = device_for(axis_name);
  const AxisGroup axis = ctx.axis_group(axis_name);
  if (root < 0 || root >= axis.size())
    throw IndexError(fmt::format("reduce root {} out of range for axis size {}", root, axis.size()));
  CollectiveCall call(ctx, axis, "reduce", CollectiveKind::reduce, options, static_cast<double>(x.nbytes()),
                      x.dtype());
  Array out =
      find_reduce(call.algorithm()).run(call.comm(), x.reshaped(Shape{x.size()}), ReduceOp::sum, root);
  if (axis.position != root) out = x.is_abstract() ? x : Array::zeros(x.shape(), x.dtype());
  return call.finish(out.reshaped(x.shape()));
}

}  // namespace spmdsim
