// pmap: JAX's argument rules on the host, then one SimGrid actor per device plus one for the host, which
// sends each device its inputs over the host links. Each call advances the one simulated clock.
#include "spmdsim/pmap.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xbt/log.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "api/collective_calls.hpp"
#include "api/device_dtype.hpp"
#include "api/kernels/kernels.hpp"
#include "api/prefix_match.hpp"
#include "engine/device_context.hpp"
#include "engine/host_transfer.hpp"
#include "engine/program_record.hpp"
#include "engine/runtime.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/residency.hpp"
#include "spmdsim/simulation.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(spmdsim_pmap);
XBT_LOG_EXTERNAL_CATEGORY(spmdsim_transfer);

namespace spmdsim {

const Tree& Arg::tree() const {
  if (is_static()) throw TypeError("argument is a static value, not a tree of arrays");
  return std::get<Tree>(value_);
}

const Array& Arg::array() const {
  const Tree& t = tree();
  if (!t.is_leaf()) throw TypeError(fmt::format("expected one array, got a tree {}", t.treedef()));
  return t.leaf();
}

const StaticValue& Arg::static_value() const {
  if (!is_static()) throw TypeError("argument is a tree of arrays, not a static value");
  return std::get<StaticValue>(value_);
}

std::int64_t Arg::as_int() const {
  const auto& v = static_value();
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
  throw TypeError("static argument is not an int");
}

double Arg::as_double() const {
  const auto& v = static_value();
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw TypeError("static argument is not a number");
}

bool Arg::as_bool() const {
  const auto& v = static_value();
  if (auto* b = std::get_if<bool>(&v)) return *b;
  throw TypeError("static argument is not a bool");
}

const std::string& Arg::as_string() const {
  const auto& v = static_value();
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  throw TypeError("static argument is not a string");
}

namespace {

using detail::AxisLeaf;
using detail::CallState;
using detail::DeviceContext;
using detail::Runtime;

// A pmapped argument leaf: what each device gets of it, and whether it must travel from the host.
struct InputLeaf {
  Array value;
  Axis axis;              // mapped axis, or none for a replicated argument
  std::string path;       // for messages, e.g. "args[0]['w']"
  bool resident = false;  // already on the call's devices from an earlier pmap, laid out as needed
  bool donated = false;   // in a position of donate_argnums
  // A donated resident leaf's buffers, taken from the caller's array: each device takes its own.
  DeviceShards donated_shards;
};

// JAX's short type text: float32[4,3].
std::string type_short(const Array& a) {
  return fmt::format("{}[{}]", dtype_name(a.dtype()), fmt::join(a.shape(), ","));
}

// A Python scalar where JAX expects an array becomes a weakly typed 0-d array.
Tree as_tree(const Arg& arg) {
  if (!arg.is_static()) return arg.tree();
  return std::visit(
      [](const auto& v) -> Tree {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>)
          return Array::scalar(v ? 1.0 : 0.0, DType::boolean);
        else if constexpr (std::is_same_v<V, std::int64_t>)
          return Array::scalar(static_cast<double>(v), DType::i32);
        else if constexpr (std::is_same_v<V, double>)
          return Array::scalar(v, DType::f32);
        else
          throw TypeError(fmt::format("Argument '{}' of type <class 'str'> is not a valid JAX type.", v));
      },
      arg.static_value());
}

std::string tuple_text(const std::vector<int>& values) {
  return values.size() == 1 ? fmt::format("({},)", values[0]) : fmt::format("({})", fmt::join(values, ", "));
}

std::string arg_label(const std::string& path, const PmapOptions& options, std::size_t position) {
  // path starts with "[i]" for positional argument i; JAX names it by parameter when it can.
  const auto close = path.find(']');
  const std::string rest = path.substr(close + 1);
  if (position < options.arg_names.size())
    return fmt::format("argument {}{}", options.arg_names[position], rest);
  return "args" + path;
}

bool is_static_position(const PmapOptions& options, std::size_t i) {
  const auto& s = options.static_broadcasted_argnums;
  return std::find(s.begin(), s.end(), static_cast<int>(i)) != s.end();
}

bool is_donated_position(const PmapOptions& options, std::size_t i) {
  const auto& d = options.donate_argnums;
  return std::find(d.begin(), d.end(), static_cast<int>(i)) != d.end();
}

void check_static_argnums(const PmapOptions& options, std::size_t nargs) {
  if (options.static_broadcasted_argnums.empty()) return;
  const int highest =
      *std::max_element(options.static_broadcasted_argnums.begin(), options.static_broadcasted_argnums.end());
  if (highest >= static_cast<int>(nargs))
    throw ValueError(
        fmt::format("pmapped function has static_broadcasted_argnums={} but was called with only {} "
                    "positional argument{}. All "
                    "static broadcasted arguments must be passed positionally.",
                    tuple_text(options.static_broadcasted_argnums), nargs, nargs > 1 ? "s" : ""));
  for (int i : options.static_broadcasted_argnums)
    if (i < 0)
      throw ValueError(fmt::format("static_broadcasted_argnums must be non-negative, got {}",
                                   tuple_text(options.static_broadcasted_argnums)));
  for (int i : options.donate_argnums)
    if (is_static_position(options, static_cast<std::size_t>(i)))
      throw ValueError(fmt::format("`static_argnums` [{}] and `donate_argnums` [{}] cannot intersect.",
                                   fmt::join(options.static_broadcasted_argnums, ", "),
                                   fmt::join(options.donate_argnums, ", ")));
}

// Flattens the dynamic arguments with their in_axes, as jax's _prepare_pmap does.
std::vector<InputLeaf> flatten_inputs(const Args& args, const PmapOptions& options,
                                      std::vector<std::size_t>& leaf_position) {
  std::vector<std::size_t> dynamic;
  std::vector<Tree> dynamic_trees;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!is_static_position(options, i)) {
      dynamic.push_back(i);
      dynamic_trees.push_back(as_tree(args[i]));
    }
  Axes dynamic_axes = options.in_axes;
  if (auto* t = std::get_if<Axes::Tuple>(&options.in_axes.node());
      t && !options.static_broadcasted_argnums.empty()) {
    std::vector<Axes> picked;
    for (auto i : dynamic) {
      if (i >= t->items.size())
        throw ValueError(
            fmt::format("pmap in_axes has {} entries but the function was called with {} arguments",
                        t->items.size(), args.size()));
      picked.push_back(t->items[i]);
    }
    dynamic_axes = Axes::tuple(std::move(picked));
  }
  std::vector<AxisLeaf> axes;
  try {
    axes = detail::broadcast_prefix(dynamic_axes, Tree::tuple(dynamic_trees), "pmap in_axes", "[0]");
  } catch (const ValueError& e) {
    throw ValueError(
        std::string(e.what()) +
        "\n\nThe 'full pytree' here is the tuple of arguments passed positionally to the pmapped "
        "function, and the value of `in_axes` must be a tree prefix of that tuple. But it was not a "
        "prefix.\n\nCheck that the value of the `in_axes` argument to `pmap` is a tree prefix of the "
        "tuple of arguments passed positionally to the pmapped function.");
  }
  std::vector<Array> values;
  for (std::size_t k = 0; k < dynamic_trees.size(); ++k)
    for (auto& leaf : dynamic_trees[k].leaves()) {
      values.push_back(leaf);
      leaf_position.push_back(dynamic[k]);
    }
  std::vector<InputLeaf> leaves;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // "[0][k]..." -> "[position]...": messages name the positional argument, not the dynamic index.
    std::string path = axes[i].path.substr(3);
    path = fmt::format("[{}]{}", leaf_position[i], path.substr(path.find(']') + 1));
    leaves.push_back({values[i], axes[i].axis, path});
  }
  return leaves;
}

std::int64_t mapped_size(std::vector<InputLeaf>& leaves, const PmapOptions& options,
                         const std::vector<std::size_t>& leaf_position) {
  if (leaves.empty())
    throw ValueError(
        "pmap wrapped function must be passed at least one argument containing an array, got empty "
        "*args=() and **kwargs={}");
  std::vector<std::pair<std::int64_t, std::size_t>> sizes;  // (size, leaf)
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    auto& leaf = leaves[i];
    if (!leaf.axis) continue;
    const int axis = *leaf.axis;
    const auto rank = leaf.value.ndim();
    if (axis >= rank || axis < -rank)
      throw ValueError(
          fmt::format("pmap was requested to map its argument along axis {}, which implies that its rank "
                      "should be at least "
                      "{}, but is only {} (its shape is {})",
                      axis, axis >= 0 ? axis + 1 : -axis, rank, shape_str(leaf.value.shape())));
    leaf.axis = axis < 0 ? static_cast<int>(axis + rank) : axis;
    sizes.emplace_back(leaf.value.shape()[static_cast<std::size_t>(*leaf.axis)], i);
  }
  if (sizes.empty()) throw ValueError("pmap must have at least one non-None value in in_axes");
  // Sizes by how many axes share them, most first (ties: first seen), as JAX lists them.
  std::vector<std::pair<std::int64_t, std::vector<std::size_t>>> groups;
  for (auto [size, leaf] : sizes) {
    auto it =
        std::find_if(groups.begin(), groups.end(), [size = size](const auto& g) { return g.first == size; });
    if (it == groups.end())
      groups.push_back({size, {leaf}});
    else
      it->second.push_back(leaf);
  }
  if (groups.size() == 1) return groups.front().first;
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string msg = "pmap got inconsistent sizes for array axes to be mapped:\n";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& [size, members] = groups[g];
    const auto& example = leaves[members.front()];
    const std::string where = fmt::format("axis {} of {} of type {}", *example.axis,
                                          arg_label(example.path, options, leaf_position[members.front()]),
                                          type_short(example.value));
    if (members.size() == 1)
      msg += fmt::format("  * one axis had size {}: {};\n", size, where);
    else if (g == 0)
      msg += fmt::format("  * most axes ({} of them) had size {}, e.g. {};\n", members.size(), size, where);
    else
      msg += fmt::format("  * some axes ({} of them) had size {}, e.g. {};\n", members.size(), size, where);
  }
  throw ValueError(msg.substr(0, msg.size() - 2));
}

void check_axis_size(const PmapOptions& options, std::int64_t size) {
  if (options.axis_size && *options.axis_size != size)
    throw ValueError(
        fmt::format("Specified axis_size {} doesn't match received axis_size {}.", *options.axis_size, size));
}

// The call's devices: `devices` if given, else the first ones; one per index over all the call's axes (the
// product of their sizes under nested pmap, as XLA counts the replicas).
std::vector<int> call_devices(const Runtime& runtime, const PmapOptions& options,
                              const std::vector<detail::MappedAxis>& axes) {
  const int available = runtime.num_devices();
  const std::int64_t size = axes.front().size;
  std::int64_t total = 1;
  for (const auto& axis : axes) total *= axis.size;
  if (options.devices) {
    const auto& devices = *options.devices;
    if (devices.empty()) throw ValueError("'devices' argument to pmap must be non-empty, or None.");
    runtime.check_devices(devices, "pmap devices");
    std::vector<std::string> names;
    for (int d : devices) names.push_back(runtime.platform().devices[static_cast<std::size_t>(d)].name);
    // JAX's wording whenever the count differs, also for too many devices.
    if (total > size && static_cast<std::int64_t>(devices.size()) != total)
      throw ValueError(fmt::format(
          "pmapped function requires {} local devices to run due to nested pmapped or other parallel "
          "functions, "
          "but only {} are available.\n(outer axis size: {}, local devices available to pmap: {})",
          total, devices.size(), size, fmt::join(names, ", ")));
    if (static_cast<std::int64_t>(devices.size()) != total)
      throw ValueError(
          fmt::format("Leading axis size of input to pmapped function must equal the number of local devices "
                      "passed to pmap. "
                      "Got axis_size={}, num_local_devices={}.\n(Local devices available to pmap: {})",
                      size, devices.size(), fmt::join(names, ", ")));
    return devices;
  }
  if (total > available)
    throw ValueError(fmt::format(
        "compiling computation that requires {} logical devices, but only {} XLA devices are available "
        "(num_replicas={})",
        total, available, total));
  if (size < 1) throw ValueError(fmt::format("pmap needs a mapped axis of size at least 1, got {}", size));
  std::vector<int> devices(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) devices[static_cast<std::size_t>(i)] = i;
  return devices;
}

// What the device at call rank `rank`, index `index` along the outermost axis, receives of a leaf.
Array shard_of(InputLeaf& leaf, int rank, int index) {
  // A resident leaf is each device's own buffer, replicated or not; a donated one is the call's alone.
  const auto r = static_cast<std::size_t>(rank);
  if (leaf.resident && leaf.donated) return leaf.donated_shards.take(r);
  if (leaf.resident) return leaf.value.residency()->shards[r];
  if (!leaf.axis) return leaf.value;
  return kernels::take(leaf.value, *leaf.axis, index).value;
}

// A pmap result already on exactly these devices, split along the same axis, needs no transfer.
bool already_in_place(const InputLeaf& leaf, const std::vector<int>& devices) {
  const auto& residency = leaf.value.residency();
  return residency && residency->devices == devices && residency->axis == leaf.axis;
}

// The inputs of one device: resident shards as they are (a put's once they have arrived), the rest sent from
// its host CPU over its host link as the call starts, as one transfer of all their bytes (host_transfer.hpp
// says why). Only the time the device waits is its transfer time: a put that arrived while an earlier call
// computed costs nothing here. The resident shards become arrays once the device stops waiting: every device
// waits at once, and an array handle per leaf and device would be held through the wait.
std::vector<Array> receive_inputs(DeviceContext& ctx, std::vector<InputLeaf>& leaves) {
  std::map<std::size_t, Array> sent;  // the shards sent from the host, by leaf
  std::set<const detail::HostCopy*> arrivals;
  Bytes bytes = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].resident) {
      const auto& put = leaves[i].value.residency()->arrivals;
      if (!put.empty()) arrivals.insert(put[static_cast<std::size_t>(ctx.rank())].get());
    } else {
      const Array& shard = sent.emplace(i, shard_of(leaves[i], ctx.rank(), ctx.index_along(0))).first->second;
      bytes += static_cast<Bytes>(shard.nbytes());
    }
  }
  const auto& hosts = ctx.runtime().hosts();
  std::optional<detail::HostTransfer> transfer;
  if (!sent.empty())
    transfer.emplace(ctx.runtime().transfer_mailboxes(), hosts.host_cpu(ctx.device()),
                     hosts.device(ctx.device()), bytes);
  const Seconds start = simgrid::s4u::Engine::get_clock();
  for (const auto* copy : arrivals) copy->wait_arrival();
  if (transfer) transfer->wait();
  const Seconds end = simgrid::s4u::Engine::get_clock();
  if (transfer || end > start) {
    XBT_CVERB(spmdsim_transfer, "device %d: %zu input transfer(s) arrived", ctx.device(),
              (transfer ? 1 : 0) + arrivals.size());
    ctx.times().transfer += end - start;
    ctx.record(SpanKind::transfer, "host->device", start, end);
  }
  std::vector<Array> inputs;
  inputs.reserve(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].resident) {
      inputs.push_back(shard_of(leaves[i], ctx.rank(), ctx.index_along(0)));
    } else {
      const auto tag = leaves[i].axis ? MemoryTag::input_shards : MemoryTag::replicated_args;
      inputs.push_back(ctx.place(sent.at(i), tag, "args" + leaves[i].path));
    }
  }
  return inputs;
}

// Marks the leaves of donated arguments and takes the buffers of the resident ones from their arrays, which
// are deleted (a donated array that is not on the call's devices is sent from the host, and its buffers are
// released now). An array deleted by an earlier call, or donated and passed again in this one, is JAX's
// error.
void take_donated(std::vector<InputLeaf>& leaves, const std::vector<std::size_t>& leaf_position,
                  const PmapOptions& options) {
  std::map<const Residency*, std::size_t> first_use;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Residency* residency = leaves[i].value.residency().get();
    if (!residency) continue;
    if (residency->deleted)
      throw ValueError("INVALID_ARGUMENT: Invalid buffer passed: buffer has been deleted or donated.");
    const auto [at, first] = first_use.try_emplace(residency, i);
    const bool donated_before = is_donated_position(options, leaf_position[at->second]);
    if (!first && (donated_before || is_donated_position(options, leaf_position[i])))
      throw ValueError(fmt::format(
          "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call to "
          "Execute() (flattened argument {}, first use: {}). Toy example for this bug: `f(donate(a), a)`.",
          i, at->second));
  }
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    InputLeaf& leaf = leaves[i];
    leaf.donated = is_donated_position(options, leaf_position[i]);
    if (!leaf.donated || !leaf.value.residency()) continue;
    DeviceShards shards = leaf.value.residency()->take_donated();
    if (leaf.resident) leaf.donated_shards = std::move(shards);
  }
}

std::size_t leaf_count(const Tree& tree) {
  std::size_t count = 0;
  tree.for_each_leaf([&](const Array&) { ++count; });
  return count;
}

// The device function's arguments: static values as given, dynamic trees rebuilt from the device leaves.
Args device_args(const Args& args, const PmapOptions& options, const std::vector<Array>& inputs) {
  Args out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_static_position(options, i)) {
      out.push_back(args[i]);
      continue;
    }
    Tree tree = as_tree(args[i]);
    const std::size_t count = leaf_count(tree);
    std::vector<Array> mine(inputs.begin() + static_cast<std::ptrdiff_t>(next),
                            inputs.begin() + static_cast<std::ptrdiff_t>(next + count));
    next += count;
    out.emplace_back(tree.rebuild(mine));
  }
  return out;
}

// The buffer of one of the device's outputs, shaped as `leaf`, held in `buffer`: the device's own buffer
// counts as an output from now on; for values made on the host side of the function (constants), or none, a
// buffer is placed on the device.
std::shared_ptr<DeviceAllocation> claim_buffer(const DeviceContext& ctx,
                                               std::shared_ptr<DeviceAllocation> buffer, const Array& leaf) {
  if (buffer && buffer->device() == ctx.device()) {
    buffer->retag(MemoryTag::outputs);
    return buffer;
  }
  return ctx.allocate(static_cast<Bytes>(leaf.nbytes()), MemoryTag::outputs, "output");
}

// The leaves of the device's outputs, in order, each in the buffer claim_buffer gives it.
std::vector<Array> claim_outputs(const DeviceContext& ctx, std::vector<Array> claimed) {
  for (Array& leaf : claimed)
    if (auto buffer = claim_buffer(ctx, leaf.allocation(), leaf); buffer != leaf.allocation())
      leaf = leaf.on_device(std::move(buffer));
  return claimed;
}

// The host's view of split results: the shards stacked along `axis`, but only once the host reads the values
// (as JAX assembles a sharded array), so results that stay on the devices are never copied. It holds the
// shards' values, not their device buffers.
Array stacked_when_read(const std::vector<Array>& shards, int axis) {
  std::vector<Array> shapes;
  for (const Array& shard : shards) shapes.push_back(Array::abstract(shard.shape(), shard.dtype()));
  Array stacked = kernels::stack(shapes, axis).value;
  if (std::any_of(shards.begin(), shards.end(), [](const Array& shard) { return shard.is_abstract(); }))
    return stacked;
  std::vector<Array> values;
  for (const Array& shard : shards) values.push_back(shard.on_device(nullptr));
  return Array::deferred(stacked.shape(), stacked.dtype(),
                         [values = std::move(values), axis] { return kernels::stack(values, axis).value; });
}

// out_axes' axis for a result of rank out_rank (the mapped axis included), non-negative.
int out_axis_in_range(int axis, std::int64_t out_rank) {
  if (axis >= out_rank || axis < -out_rank)
    throw ValueError(fmt::format("axis {} is out of bounds for array of dimension {}", axis, out_rank));
  return axis < 0 ? static_cast<int>(axis + out_rank) : axis;
}

// Leaf i of every device, in device order: each device's part moves into it, so a call on thousands of
// devices copies no handle twice.
template <class Part>
std::vector<Part> column(std::vector<std::vector<Part>>& by_device, std::size_t i) {
  std::vector<Part> parts;
  parts.reserve(by_device.size());
  for (auto& device_parts : by_device) parts.push_back(std::move(device_parts[i]));
  return parts;
}

// Each output leaf's shards from each device's output leaves (a call that runs the function on every device).
std::vector<DeviceShards> shards_by_leaf(std::vector<std::vector<Array>> by_device) {
  std::vector<DeviceShards> by_leaf;
  for (std::size_t i = 0; i < by_device.front().size(); ++i) by_leaf.emplace_back(column(by_device, i));
  return by_leaf;
}

// Each output leaf's shards from each device's buffers of the leaves (a replayed call): the record's shape
// once.
std::vector<DeviceShards> replayed_shards(
    const detail::ProgramRecord& record,
    std::vector<std::vector<std::shared_ptr<DeviceAllocation>>> by_device) {
  std::vector<DeviceShards> by_leaf;
  for (std::size_t i = 0; i < record.outputs.shapes.size(); ++i)
    by_leaf.emplace_back(record.outputs.shapes[i], column(by_device, i));
  return by_leaf;
}

// The host's view of the call's results, a tree of `structure` (the first device's outputs) from each output
// leaf's shards: each leaf stacked over the outermost axis from one device per outer index (every device of
// an inner group holds the same value), resident on every device.
Tree assemble_outputs(const Tree& structure, std::vector<DeviceShards> leaves, const PmapOptions& options,
                      const std::vector<int>& devices, std::size_t group_size) {
  const std::vector<AxisLeaf> axes =
      detail::broadcast_prefix(options.out_axes, structure, "pmap out_axes", "");
  std::vector<Array> assembled;
  assembled.reserve(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    DeviceShards& shards = leaves[i];
    auto residency = std::make_shared<Residency>();
    residency->devices = devices;
    if (!axes[i].axis) {
      // The host's view holds the values, not device 0's buffer: the residency alone keeps the buffers.
      Array host_view = shards[0].on_device(nullptr);
      residency->shards = std::move(shards);
      assembled.push_back(host_view.with_residency(std::move(residency)));
      continue;
    }
    std::vector<Array> outer;
    for (std::size_t rank = 0; rank < shards.size(); rank += group_size) outer.push_back(shards[rank]);
    const int axis = out_axis_in_range(*axes[i].axis, outer.front().ndim() + 1);
    residency->axis = axis;
    residency->shards = std::move(shards);
    assembled.push_back(stacked_when_read(outer, axis).with_residency(std::move(residency)));
  }
  return structure.rebuild(assembled);
}

// What the first device gets of each leaf, as shapes alone (the host checks a nested pmap on them).
std::vector<Array> first_shard_shapes(const std::vector<InputLeaf>& leaves) {
  std::vector<Array> shapes;
  for (const auto& leaf : leaves) {
    const Array shape = Array::abstract(leaf.value.shape(), leaf.value.dtype());
    shapes.push_back(leaf.axis ? kernels::take(shape, *leaf.axis, 0).value : shape);
  }
  return shapes;
}

// JAX's checks of a nested pmap's options and arguments, then its axis; `leaves` become its flattened
// arguments, negative mapped axes made positive.
detail::MappedAxis check_nested_pmap(const PmapOptions& options, const Args& args,
                                     std::vector<InputLeaf>& leaves) {
  if (options.devices) throw ValueError("Nested pmap with explicit devices argument.");
  // JAX 0.5.2 fails so on an inner out_axes of None (its unsharding indexes with the axis).
  const auto out_axes = options.out_axes.leaves();
  const bool has_none = std::any_of(out_axes.begin(), out_axes.end(), [](const Axis& axis) { return !axis; });
  if (has_none) throw TypeError("'NoneType' object cannot be interpreted as an integer");
  // JAX 0.5.2 unshards an inner pmap's results along axis 0 only; another axis fails in its MLIR lowering.
  if (std::any_of(out_axes.begin(), out_axes.end(), [](const Axis& axis) { return *axis != 0; }))
    throw ValueError("Operation creation failed");
  check_static_argnums(options, args.size());
  std::vector<std::size_t> leaf_position;
  leaves = flatten_inputs(args, options, leaf_position);
  const auto size = mapped_size(leaves, options, leaf_position);
  check_axis_size(options, size);
  return {options.axis_name, static_cast<int>(size)};
}

// The host's checks of a nested pmap, on the shapes the outer pmap's devices pass it. `args` becomes what the
// next level's function gets (abstract).
detail::MappedAxis check_nested_level(const PmapOptions& options, Args& args) {
  std::vector<InputLeaf> leaves;
  const detail::MappedAxis axis = check_nested_pmap(options, args, leaves);
  args = device_args(args, options, first_shard_shapes(leaves));
  return axis;
}

// The call's axis that a nested pmap mapping `wanted` runs over: the next one the device has not bound, which
// must be there (declared) and agree with the pmap's name and size.
std::size_t next_axis_for(const DeviceContext& ctx, const PmapOptions& options,
                          const detail::MappedAxis& wanted) {
  const std::size_t level = ctx.bound_levels();
  const auto& axes = ctx.call().axes;
  const auto name = [](const std::optional<std::string>& n) {
    return n ? "'" + *n + "'" : std::string("None");
  };
  if (level == axes.size())
    throw NotImplementedError(fmt::format(
        "{} (axis_name {}, size {}) called inside a pmapped function whose options declare no axis for it: "
        "spmdsim picks the devices before the function runs, so declare the inner pmap in the outer pmap's "
        "options, inner_axes = {{{{{}, {}}}}}, or nest the functions, pmap(pmap(f, ...), ...)",
        options.name, name(wanted.name), wanted.size, wanted.name ? "\"" + *wanted.name + "\"" : "{}",
        wanted.size));
  const detail::MappedAxis& declared = axes[level];
  if (declared.name != wanted.name || declared.size != wanted.size)
    throw ValueError(fmt::format(
        "{} called inside a pmapped function maps axis_name {} of size {}, but the axis declared for it "
        "(inner_axes) is {} of size {}",
        options.name, name(wanted.name), wanted.size, name(declared.name), declared.size));
  return level;
}

// A device's share of levels[level] and the pmaps inside it, on the call's next unbound axis: its slice of
// each mapped argument along that axis (a dynamic slice on the device, as XLA shards a nested pmap's inputs),
// the function with the axis bound, then each result gathered from the axis's group and stacked at its out
// axis (XLA gathers with an all-reduce of zero-padded buffers, the same values).
Tree run_levels(DeviceContext& ctx, const std::vector<PmapOptions>& levels, std::size_t level,
                const DeviceFunction& fn, Args args) {
  if (level == levels.size()) return fn(std::move(args));
  const PmapOptions& options = levels[level];
  std::vector<InputLeaf> leaves;
  const std::size_t axis = next_axis_for(ctx, options, check_nested_pmap(options, args, leaves));
  const int index = ctx.index_along(axis);
  std::vector<Array> mine;
  for (const auto& leaf : leaves)
    mine.push_back(leaf.axis ? take(leaf.value, *leaf.axis, index) : leaf.value);
  ctx.bind_levels(axis + 1);
  const Tree out = run_levels(ctx, levels, level + 1, fn, device_args(args, options, mine));
  ctx.bind_levels(axis);
  const auto axes = detail::broadcast_prefix(options.out_axes, out, "pmap out_axes", "");
  const detail::AxisGroup group = ctx.axis_group(std::vector<std::size_t>{axis});
  std::vector<Array> gathered;
  const auto results = out.leaves();
  for (std::size_t i = 0; i < results.size(); ++i)
    gathered.push_back(
        detail::all_gather(results[i], group, out_axis_in_range(*axes[i].axis, results[i].ndim() + 1)));
  return out.rebuild(gathered);
}

// The axes a call maps: the outer pmap's, each nested pmap's (from the shapes its devices pass it), then
// those its function declares for the pmaps it calls.
std::vector<detail::MappedAxis> call_axes(const std::vector<PmapOptions>& levels, const Args& args,
                                          const std::vector<InputLeaf>& leaves, std::int64_t size) {
  std::vector<detail::MappedAxis> axes{{levels.front().axis_name, static_cast<int>(size)}};
  if (levels.size() > 1) {  // a mapped axis of size 0 has no first shard: call_devices refuses it later
    Args level_args = device_args(args, levels.front(), first_shard_shapes(leaves));
    for (std::size_t level = 1; level < levels.size(); ++level)
      axes.push_back(check_nested_level(levels[level], level_args));
  }
  for (std::size_t level = 0; level + 1 < levels.size(); ++level)
    if (!levels[level].inner_axes.empty())
      throw ValueError(fmt::format(
          "{}: inner_axes belong to the options of the pmap whose function calls the inner pmap; this one's "
          "function is the nested pmap inside it",
          levels[level].name));
  for (const InnerAxis& inner : levels.back().inner_axes) {
    if (inner.size < 1)
      throw ValueError(
          fmt::format("{}: inner_axes sizes must be at least 1, got {}", levels.back().name, inner.size));
    axes.push_back({inner.name, static_cast<int>(inner.size)});
  }
  return axes;
}

// Whether a call may run its function once and replay it on every device (PmapOptions::trace_once): one
// level of pmap, abstract arguments and devices of one spec, so that every device runs the same program.
bool replayable(const std::vector<PmapOptions>& levels, const std::vector<InputLeaf>& leaves,
                const detail::Runtime& runtime, const std::vector<int>& devices) {
  if (!levels.front().trace_once || levels.size() > 1 || !levels.front().inner_axes.empty()) return false;
  if (!std::all_of(leaves.begin(), leaves.end(),
                   [](const InputLeaf& leaf) { return leaf.value.is_abstract(); }))
    return false;
  const auto& platform_devices = runtime.platform().devices;
  const DeviceSpec& first = platform_devices[static_cast<std::size_t>(devices.front())].spec;
  return std::all_of(devices.begin(), devices.end(),
                     [&](int d) { return platform_devices[static_cast<std::size_t>(d)].spec == first; });
}

// Runs fn once, on the first device's input shapes, in a recording context; null where it cannot be replayed
// or fails (every device then runs it, and meets the same error).
std::shared_ptr<const detail::ProgramRecord> record_program(detail::Runtime& runtime, CallState& call,
                                                            const std::vector<PmapOptions>& levels,
                                                            const DeviceFunction& fn, const Args& args,
                                                            const std::vector<InputLeaf>& leaves) {
  DeviceContext ctx(runtime, call, 0);
  detail::ProgramRecorder recorder;
  ctx.record_with(&recorder);
  detail::bind_current_device(&ctx);
  std::shared_ptr<const detail::ProgramRecord> record;
  try {
    std::vector<Array> inputs;
    const auto shapes = first_shard_shapes(leaves);
    for (const Array& shape : shapes) inputs.push_back(recorder.input(ctx, shape));
    Args device = device_args(args, levels.front(), inputs);
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (leaves[i].donated) inputs[i] = Array();
    const Tree out = run_levels(ctx, levels, 1, fn, std::move(device));
    record = std::make_shared<const detail::ProgramRecord>(recorder.finish(out));
  } catch (const std::exception& e) {
    XBT_VERB("%s runs on every device: %s", levels.front().name.c_str(), e.what());
  }
  detail::bind_current_device(nullptr);
  return record;
}

}  // namespace

void device_effect(const std::function<void(int axis_index)>& fn) {
  DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr) throw ValueError("device_effect called outside a pmapped function");
  if (detail::ProgramRecorder* recorder = ctx->recorder()) return recorder->effect(fn);
  fn(ctx->index_along(0));
}

PmappedFunction::PmappedFunction(DeviceFunction fn, PmapOptions options)
    : fn_(std::move(fn)), levels_{std::move(options)} {}

PmappedFunction::PmappedFunction(PmappedFunction inner, PmapOptions options)
    : fn_(std::move(inner.fn_)), levels_{std::move(options)} {
  levels_.insert(levels_.end(), inner.levels_.begin(), inner.levels_.end());
}

PmappedFunction pmap(DeviceFunction fn, PmapOptions options) {
  return PmappedFunction(std::move(fn), std::move(options));
}

PmappedFunction pmap(PmappedFunction inner, PmapOptions options) {
  return PmappedFunction(std::move(inner), std::move(options));
}

Tree PmappedFunction::operator()(const Args& args) const {
  DeviceContext* ctx = detail::current_device();
  if (ctx == nullptr)
    throw ValueError(
        fmt::format("{} called without a Simulation outside a pmapped function: call it as "
                    "fn(sim, args)",
                    options().name));
  return run_levels(*ctx, levels_, 0, fn_, args);
}

Tree PmappedFunction::operator()(Simulation& sim, const Args& args) const {
  if (DeviceContext* ctx = detail::current_device()) {
    if (&ctx->runtime() != &sim.runtime())
      throw ValueError(
          fmt::format("{} called inside a pmapped function of another Simulation", options().name));
    return (*this)(args);
  }
  Runtime& runtime = sim.runtime();
  const PmapOptions& options_ = levels_.front();
  check_static_argnums(options_, args.size());
  std::vector<std::size_t> leaf_position;
  auto leaves = flatten_inputs(args, options_, leaf_position);
  for (auto& leaf : leaves)
    if (!leaf.value.residency()) leaf.value = detail::device_dtype(leaf.value, runtime.enable_x64());
  const auto size = mapped_size(leaves, options_, leaf_position);
  check_axis_size(options_, size);
  CallState call;
  call.axes = call_axes(levels_, args, leaves, size);
  call.devices = call_devices(runtime, options_, call.axes);
  call.devices_in_platform_order = detail::GroupRanks(call.devices).in_call_order;
  for (auto& leaf : leaves) leaf.resident = already_in_place(leaf, call.devices);
  take_donated(leaves, leaf_position, options_);

  const auto n = call.devices.size();
  call.report.name = options_.name;
  call.report.devices = call.devices;
  call.report.times.resize(n);
  call.report.spans.resize(n);
  call.report.start = simgrid::s4u::Engine::get_clock();
  for (int d : call.devices) runtime.ledger(d)->start_window();
  XBT_VERB("%s on %zu devices, %zu argument leaves", options_.name.c_str(), n, leaves.size());

  std::vector<std::vector<Array>> outputs(n);  // each device's output leaves, where it runs the function
  // [rank][leaf]: each device's buffer of each output leaf, where it replays the record (by device, so that
  // each device writes its own row)
  std::vector<std::vector<std::shared_ptr<DeviceAllocation>>> replayed_outputs(n);
  Tree output_structure;
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  for (std::size_t rank = 0; rank < n; ++rank)
    contexts.push_back(std::make_unique<DeviceContext>(runtime, call, static_cast<int>(rank)));
  std::shared_ptr<const detail::ProgramRecord> record;  // null: every device runs the function
  const auto start_devices = [&] {
    for (std::size_t rank = 0; rank < n; ++rank) {
      DeviceContext* ctx = contexts[rank].get();
      auto* host = runtime.hosts().device(ctx->device());
      simgrid::s4u::Actor::create(fmt::format("{}:{}", options_.name, rank), host, [&, ctx, rank] {
        detail::bind_current_device(ctx);
        try {
          {
            auto inputs = receive_inputs(*ctx, leaves);
            // The call's own hold on its inputs' buffers until the program ends; the function's arguments
            // hold the donated ones alone.
            std::vector<std::shared_ptr<DeviceAllocation>> held;
            for (std::size_t i = 0; i < leaves.size(); ++i)
              if (!leaves[i].donated) held.push_back(inputs[i].allocation());
            XBT_VERB("device %d: %s's program starts", ctx->device(), options_.name.c_str());
            if (record) {
              auto out = detail::replay_program(*ctx, *record, std::move(inputs));
              if (rank == 0) output_structure = record->output_tree;
              ctx->finish_stream();  // collectives still on the device's stream are waited for
              auto& buffers = replayed_outputs[rank];
              buffers.reserve(out.size());
              for (std::size_t i = 0; i < out.size(); ++i)
                buffers.push_back(claim_buffer(*ctx, std::move(out[i]), record->outputs.shapes[i]));
            } else {
              std::vector<Array> out;
              {  // the function's arguments and output tree go before the stream is waited for
                Args device = device_args(args, options_, std::exchange(inputs, {}));
                const Tree tree = run_levels(*ctx, levels_, 1, fn_, std::move(device));
                out = tree.leaves();
                if (rank == 0)
                  output_structure =
                      tree.map([](const Array& leaf) { return Array::abstract(leaf.shape(), leaf.dtype()); });
              }
              ctx->finish_stream();  // as above
              outputs[rank] = claim_outputs(*ctx, std::move(out));
            }
          }  // its inputs released at the device's own time, before the compute booked up to then runs
          ctx->flush_compute();
          XBT_VERB("device %d: %s's program ends", ctx->device(), options_.name.c_str());
        } catch (const simgrid::ForcefulKillException&) {
          throw;  // being killed after another device failed: let SimGrid unwind this actor
        } catch (...) {
          runtime.fail(std::current_exception());
        }
      });
    }
  };
  if (replayable(levels_, leaves, runtime, call.devices))
    simgrid::s4u::Actor::create(
        options_.name + ":recording", runtime.hosts().device(call.devices.front()), [&] {
          record = record_program(runtime, call, levels_, fn_, args, leaves);
          start_devices();
        });
  else
    start_devices();
  runtime.run();

  call.report.replayed = record != nullptr;
  call.report.end = simgrid::s4u::Engine::get_clock();
  XBT_VERB("%s ends", options_.name.c_str());
  for (std::size_t rank = 0; rank < n; ++rank) {
    auto& times = call.report.times[rank];
    times.idle =
        (call.report.end - call.report.start) - times.compute - times.transfer - times.communication_total();
    const auto& ledger = *runtime.ledger(call.devices[rank]);
    call.report.memory.push_back(
        {ledger.device_name(), ledger.capacity(), ledger.window_peak(), ledger.window_at_peak()});
  }
  auto shards =
      record ? replayed_shards(*record, std::move(replayed_outputs)) : shards_by_leaf(std::move(outputs));
  Tree result = assemble_outputs(output_structure, std::move(shards), options_, call.devices,
                                 n / static_cast<std::size_t>(size));
  runtime.add_call(std::move(call.report));
  return result;
}

}  // namespace spmdsim
