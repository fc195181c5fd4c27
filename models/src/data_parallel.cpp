// The data-parallel train step: one per-device function for every strategy, built around four moments:
// fetch the params a unit needs, accumulate gradients over micro-batches, reduce them (whole, or bucket by
// bucket while the last backward runs), update (whole leaves or this device's shards) and give the new params
// back. What each moment does under a given strategy is that strategy's (strategies/training_strategy.hpp).
#include "spmdsim/models/data_parallel.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "bucket_reducer.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/models/sharding.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/simulation.hpp"
#include "strategies/registry.hpp"
#include "unit_gatherer.hpp"

namespace spmdsim::models {
namespace {

Tree cast(const Tree& tree, DType dtype) {
  return tree.map([dtype](const Array& leaf) { return leaf.dtype() == dtype ? leaf : astype(leaf, dtype); });
}

Tree add_trees(const Tree& a, const Tree& b) {
  const auto right = b.leaves();
  std::size_t next = 0;
  return a.map([&](const Array& leaf) { return leaf + right.at(next++); });
}

// Reduced gradients of one more micro-batch added to the earlier ones' (none yet: empty).
std::vector<Array> add_reduced(std::vector<Array> earlier, std::vector<Array> more) {
  if (earlier.empty()) return more;
  for (std::size_t i = 0; i < more.size(); ++i)
    more[i] = tag_as(std::exchange(earlier[i], Array()) + more[i], tags::gradients);
  return more;
}

}  // namespace

struct TrainStep::Plan {
  AnyTrainableModel model;
  Optimizer optimizer;
  int num_devices;
  TrainOptions options;
  const TrainingStrategy& strategy;
  Tree abstract_params;       // the full fp32 params' shapes, unit by unit
  std::vector<Shape> shapes;  // the same leaf shapes, in flattening order
  Axes params_axes;
  Axes state_axes;
  // Strategies that reduce during the backward: the gradient buckets, and the flattening index of each unit's
  // first leaf (and the leaf count).
  std::vector<GradientBucket> buckets;
  std::vector<std::size_t> unit_offsets;
  std::vector<std::int64_t> unit_elements;  // each unit's parameter count (what a gather brings)

  bool mixed() const { return options.precision == Precision::mixed_bf16; }
  bool params_are_master() const { return options.params_are_master(); }
  DType compute_dtype() const { return mixed() ? DType::bf16 : DType::f32; }
  DType param_dtype() const { return options.param_dtype(); }
  DType reduce_dtype() const { return options.reduction_dtype(); }
  PrefetchLimits prefetch_limits() const {
    return {options.zero.prefetch_units, options.zero.prefetch_elements, options.zero.max_live_elements};
  }
  // What the reduction takes of gradients summed over k micro-batches: their mean, in the reduce dtype.
  Tree reduction_input(Tree grads, int k) const;
  // The params a gather of these units starts from: this device's shards, in the compute dtype. Where they
  // are fp32 master shards under mixed precision, each unit's is cast first (FSDP's low-precision shard,
  // freed once gathered).
  Tree gather_input(const Tree& params, const std::vector<int>& units) const;
  // This device's reduced gradient shards as it keeps them: in fp32 where its params are the fp32 masters
  // (FSDP casts them to the param dtype as they come out of the reduce-scatter), as reduced otherwise.
  std::vector<Array> kept_gradients(std::vector<Array> reduced) const;

  Tree device_step(Args args, StepMemory& memory) const;
};

Tree TrainStep::Plan::reduction_input(Tree grads, int k) const {
  if (k > 1)
    grads = tag_as(grads.map([k](const Array& g) { return g / static_cast<double>(k); }), tags::gradients);
  if (reduce_dtype() != compute_dtype()) grads = tag_as(cast(grads, reduce_dtype()), tags::gradients);
  return grads;
}

Tree TrainStep::Plan::gather_input(const Tree& params, const std::vector<int>& units) const {
  if (param_dtype() == compute_dtype()) return params;
  std::vector<Tree> unit_params;
  for (std::size_t u = 0; u < params.size(); ++u) {
    const bool gathered = std::find(units.begin(), units.end(), static_cast<int>(u)) != units.end();
    unit_params.push_back(gathered ? tag_as(cast(params[u], compute_dtype()), tags::parameters) : params[u]);
  }
  return Tree::list(std::move(unit_params));
}

std::vector<Array> TrainStep::Plan::kept_gradients(std::vector<Array> reduced) const {
  if (params_are_master())
    for (Array& shard : reduced)
      if (shard.dtype() != DType::f32) shard = tag_as(astype(shard, DType::f32), tags::gradients);
  return reduced;
}

Tree TrainStep::Plan::device_step(Args args, StepMemory& memory) const {
  const std::string& axis = options.axis_name;
  // The rank picks what a sharding strategy keeps of each leaf. With everything replicated every device runs
  // the same program (PmapOptions::trace_once), and its per-device memory snapshots are device effects.
  const bool sharded = strategy.shards_params() || strategy.shards_optimizer_state();
  const int rank = sharded ? static_cast<int>(axis_index(axis).item(0)) : 0;
  const DeviceStep here{abstract_params, axis, rank, num_devices, options.zero.overlaps(options.strategy)};
  Tree params = tag_as(args[0].tree(), tags::parameters);
  Tree state = tag_as(args[1].tree(), tags::optimizer_state);
  const Array x = args[2].array();
  const Array y = args[3].array();
  args.clear();  // donated, the step's own handles on the state are the only ones left

  const int k = options.micro_batches;
  // Sharded params are gathered unit by unit, the next units prefetched (unit_gatherer.hpp).
  std::optional<UnitGatherer> gatherer;
  if (strategy.shards_params())
    gatherer.emplace(
        model.fetch_order(), k, unit_elements, options.zero.wrap_units, prefetch_limits(),
        [&](const std::vector<int>& units) {
          return strategy.start_gather(here, units, gather_input(params, units));
        },
        [&](int u, Tree gathered) {
          return strategy.gathered_unit(here, static_cast<std::size_t>(u), std::move(gathered));
        });
  LayerFetch fetch = [&](int u) -> Tree {
    return gatherer ? gatherer->fetch(u) : params[static_cast<std::size_t>(u)];
  };

  // Loss and gradients of this device's batch, accumulated over micro-batches, unit by unit.
  const auto batch = x.shape().empty() ? 0 : x.shape()[0];
  if (batch % k != 0)
    throw ValueError(
        fmt::format("{}: a per-device batch of {} examples cannot be cut into {} equal micro-batches",
                    options.name, batch, k));
  const auto micro = batch / k;
  // With buckets, a backward hands each unit's gradients to the reducer as it finishes them and keeps none.
  // Sharded gradients are reduced so in every micro-batch, and each device sums its shards (DeepSpeed's ZeRO
  // 2 and 3, FSDP outside no_sync). Otherwise only the last micro-batch's backward reduces, each unit's
  // gradients summed with the earlier micro-batches', which only accumulate (DDP's and FSDP's no_sync).
  const bool reduces_every_micro_batch = strategy.shards_gradients() && !options.zero.no_sync;
  std::optional<BucketReducer> reducer;
  std::vector<Array> reduced_earlier;  // this device's part of the earlier micro-batches' reduced gradients
  std::vector<Tree> accumulated(abstract_params.size());
  Array loss;
  for (int m = 0; m < k; ++m) {
    GradsReady ready;
    if (!buckets.empty() && (reduces_every_micro_batch || m == k - 1)) {
      reducer.emplace(buckets, unit_offsets, [&](std::vector<Array> grads) {
        return strategy.start_bucket(here, std::move(grads));
      });
      ready = [&](int unit, Tree unit_grads) {
        Tree& earlier = accumulated[static_cast<std::size_t>(unit)];
        if (m > 0 && !reduces_every_micro_batch)
          unit_grads = add_trees(std::exchange(earlier, Tree()), unit_grads);
        reducer->add(unit, reduction_input(tag_as(unit_grads, tags::gradients), k));
      };
    }
    LossAndGrads lg = k == 1 ? model.value_and_grad(fetch, x, y, ready)
                             : model.value_and_grad(fetch, slice(x, 0, m * micro, (m + 1) * micro),
                                                    slice(y, 0, m * micro, (m + 1) * micro), ready);
    loss = m == 0 ? lg.loss : loss + lg.loss;
    // A backward's reductions are waited for before the next micro-batch starts, as FSDP's post-backward
    // callback and DeepSpeed's reduction stream do; the last one's after the loss is summed, as before.
    if (ready && m < k - 1)
      reduced_earlier = add_reduced(std::move(reduced_earlier), kept_gradients(reducer->finish()));
    if (ready) continue;
    for (std::size_t u = 0; u < accumulated.size(); ++u)
      accumulated[u] = m == 0 ? lg.grads[u] : tag_as(add_trees(accumulated[u], lg.grads[u]), tags::gradients);
  }
  if (k > 1) loss = loss / static_cast<double>(k);

  // Reduce: the mean over devices, bucket by bucket as the backward went, or as the strategy reduces it
  // whole.
  Tree grads = reducer
                   ? abstract_params.rebuild(
                         add_reduced(std::move(reduced_earlier), kept_gradients(reducer->finish())))
                   : strategy.reduce(here, reduction_input(Tree::list(std::exchange(accumulated, {})), k));
  loss = pmean(loss, axis);

  // Every piece of model state is live now, and nothing else of the step's making.
  device_effect([&memory](int index) {
    const auto device = static_cast<std::size_t>(index);
    memory.before_update[device] = live_memory();
    memory.peak_before_update[device] = call_peak_memory();
    memory.update_start[device] = memory_mark();
  });

  // Update, in fp32, on what the strategy updates: whole leaves or this device's shards.
  Tree inner = params_are_master() ? state : state["opt"];
  // fp32: the params where they are the master weights (whole or shards), the master weights otherwise
  Tree weights = params_are_master() ? strategy.update_weights(here, params) : state["master"];
  state = Tree();
  // Where the params are the fp32 weights and share the optimizer state's layout (dp, zero3), the weights are
  // the params themselves, renewed leaf by leaf. Otherwise the params are a bf16 copy of the weights (mixed
  // precision) or what they are cut from (zero1, zero2), kept until the new params are made.
  if (params_are_master() && strategy.shards_params() == strategy.shards_optimizer_state()) params = Tree();
  Tree update_grads = strategy.update_grads(here, std::move(grads));
  grads = Tree();
  update_grads = cast(update_grads, DType::f32);
  // Donated, the update is handed the only handles on the old state (exchanged: a Tree has no move) and
  // releases each leaf as its new one is made; otherwise the caller's arguments keep all of it live through
  // the update.
  OptimizerStep step = options.donate_state ? optimizer.update(update_grads, std::exchange(inner, Tree()),
                                                               std::exchange(weights, Tree()))
                                            : optimizer.update(update_grads, inner, weights);
  update_grads = Tree();
  weights = Tree();
  params = Tree();  // the new params take the old ones' place, as a donated buffer is reused for its like

  Tree new_state = step.state;
  if (!params_are_master())
    new_state = Tree::dict({{"master", tag_as(step.params, tags::optimizer_state)}, {"opt", step.state}});
  Tree new_params =
      params_are_master() ? step.params : tag_as(cast(step.params, compute_dtype()), tags::parameters);
  new_params = strategy.updated_params(here, std::move(new_params));
  device_effect([&memory](int index) {
    const auto device = static_cast<std::size_t>(index);
    memory.peak_of_update[device] = peak_memory_since(memory.update_start[device]);
  });
  return Tree::tuple({new_params, new_state, loss});
}

TrainStep::TrainStep(AnyTrainableModel model, Optimizer optimizer, int num_devices, TrainOptions options) {
  if (options.devices) num_devices = static_cast<int>(options.devices->size());
  if (num_devices < 1)
    throw ValueError(fmt::format("a train step needs at least one device, got {}", num_devices));
  if (options.micro_batches < 1)
    throw ValueError(fmt::format("micro_batches must be at least 1, got {}", options.micro_batches));
  if (options.precision == Precision::mixed_bf16 && options.reduce_dtype != DType::bf16 &&
      options.reduce_dtype != DType::f32)
    throw ValueError(fmt::format("mixed precision reduces gradients in bfloat16 or float32, not {}",
                                 dtype_name(options.reduce_dtype)));
  check_zero_options(options.zero);
  const TrainingStrategy& strategy = training_strategy(options.strategy);
  if (options.precision == Precision::mixed_bf16 && options.param_shard_dtype != DType::bf16 &&
      !(options.param_shard_dtype == DType::f32 && strategy.shards_params()))
    throw ValueError(fmt::format(
        "mixed precision keeps param shards in bfloat16, or in float32 under a strategy that shards params "
        "(zero3), not {} under {}",
        dtype_name(options.param_shard_dtype), strategy_name(options.strategy)));
  Tree abstract_params = model.init_abstract();
  std::vector<Shape> shapes;
  for (const Array& leaf : abstract_params.leaves()) shapes.push_back(leaf.shape());
  auto plan = std::make_shared<Plan>(Plan{std::move(model), std::move(optimizer), num_devices,
                                          std::move(options), strategy, std::move(abstract_params),
                                          std::move(shapes), Axes(none), Axes(none)});
  std::vector<Bytes> leaf_bytes;
  for (const Shape& shape : plan->shapes)
    leaf_bytes.push_back(static_cast<Bytes>(num_elements(shape)) *
                         static_cast<Bytes>(itemsize(plan->reduce_dtype())));
  plan->buckets = strategy.gradient_buckets(leaf_bytes, static_cast<Bytes>(itemsize(plan->reduce_dtype())),
                                            plan->options);
  plan->unit_offsets.push_back(0);
  for (std::size_t u = 0; u < plan->abstract_params.size(); ++u) {
    const std::vector<Array> leaves = plan->abstract_params[u].leaves();
    plan->unit_offsets.push_back(plan->unit_offsets.back() + leaves.size());
    std::int64_t elements = 0;
    for (const Array& leaf : leaves) elements += leaf.size();
    plan->unit_elements.push_back(elements);
  }
  if (strategy.shards_params()) plan->params_axes = Axes(0);
  if (strategy.shards_optimizer_state()) {
    std::map<std::string, Axes> inner;
    const auto per_parameter = plan->optimizer.per_parameter_entries();
    if (plan->optimizer.kind() == Optimizer::Kind::adam) inner.emplace("count", Axes(none));
    for (const auto& entry : per_parameter) inner.emplace(entry, Axes(0));
    plan->state_axes = plan->params_are_master()
                           ? Axes::dict(std::move(inner))
                           : Axes::dict({{"master", Axes(0)}, {"opt", Axes::dict(std::move(inner))}});
  }
  plan_ = plan;
  memory_ =
      std::make_shared<StepMemory>(StepMemory{std::vector<MemoryByTag>(static_cast<std::size_t>(num_devices)),
                                              std::vector<MemoryByTag>(static_cast<std::size_t>(num_devices)),
                                              std::vector<Bytes>(static_cast<std::size_t>(num_devices)),
                                              std::vector<std::size_t>(static_cast<std::size_t>(num_devices))});
  PmapOptions pmap_options{
      .in_axes = Axes::tuple({plan->params_axes, plan->state_axes, Axes(0), Axes(0)}),
      .out_axes = Axes::tuple({plan->params_axes, plan->state_axes, Axes(none)}),
      .axis_name = plan->options.axis_name,
      .donate_argnums = plan->options.donate_state ? std::vector<int>{0, 1} : std::vector<int>{},
      .devices = plan->options.devices,
      .name = plan->options.name,
      .arg_names = {"params", "opt_state", "batch_x", "batch_y"},
      .trace_once = plan->options.trace_once};
  auto memory = memory_;
  pmapped_ = std::make_shared<PmappedFunction>(
      pmap([plan, memory](Args args) -> Tree { return plan->device_step(std::move(args), *memory); },
           std::move(pmap_options)));
}

const AnyTrainableModel& TrainStep::model() const {
  return plan_->model;
}
const Optimizer& TrainStep::optimizer() const {
  return plan_->optimizer;
}
const TrainOptions& TrainStep::options() const {
  return plan_->options;
}
int TrainStep::num_devices() const {
  return plan_->num_devices;
}
const PmappedFunction& TrainStep::pmapped() const {
  return *pmapped_;
}
const Axes& TrainStep::params_axes() const {
  return plan_->params_axes;
}
const Axes& TrainStep::state_axes() const {
  return plan_->state_axes;
}
const std::vector<GradientBucket>& TrainStep::buckets() const {
  return plan_->buckets;
}
const std::vector<MemoryByTag>& TrainStep::memory_before_update() const {
  return memory_->before_update;
}
const std::vector<MemoryByTag>& TrainStep::peak_before_update() const {
  return memory_->peak_before_update;
}
const std::vector<Bytes>& TrainStep::peak_of_update() const {
  return memory_->peak_of_update;
}

TrainState TrainStep::init(const Tree& params) const {
  const Plan& plan = *plan_;
  std::vector<Shape> shapes;
  for (const Array& leaf : params.leaves()) shapes.push_back(leaf.shape());
  if (!params.same_structure(plan.abstract_params) || shapes != plan.shapes)
    throw ValueError(fmt::format("train step init: params {} do not match the model's parameter shapes",
                                 params.treedef()));
  for (const Array& leaf : params.leaves())
    if (leaf.dtype() != DType::f32)
      throw TypeError(fmt::format("train step init: params must be float32 (the master weights), got {}",
                                  dtype_name(leaf.dtype())));
  const int n = plan.num_devices;
  Tree kept = cast(params, plan.param_dtype());
  // fp32, as the update sees them
  Tree weights = plan.strategy.shards_optimizer_state() ? shard_tree(params, n) : params;
  Tree inner = plan.optimizer.init(weights);
  Tree state = plan.params_are_master() ? inner : Tree::dict({{"master", weights}, {"opt", inner}});
  return {plan.strategy.shards_params() ? shard_tree(kept, n) : kept, state};
}

TrainState TrainStep::init_on_devices(Simulation& sim) const {
  const Plan& plan = *plan_;
  const TrainState host =
      init(plan.abstract_params);  // abstract: shapes only, as the host would lay them out
  // A device's part of a host leaf: all of it where replicated, one row of [N, shard] where sharded.
  auto device_part = [](const Tree& tree, bool sharded) {
    return tree.map([sharded](const Array& leaf) {
      return sharded ? Array::abstract({leaf.shape()[1]}, leaf.dtype())
                     : Array::abstract(leaf.shape(), leaf.dtype());
    });
  };
  auto device_state = [&, device_part]() -> Tree {
    if (!plan.strategy.shards_optimizer_state()) return device_part(host.opt_state, false);
    const Tree& host_inner = plan.params_are_master() ? host.opt_state : host.opt_state["opt"];
    std::map<std::string, Tree> inner;
    if (plan.optimizer.kind() == Optimizer::Kind::adam)
      inner.emplace("count", device_part(host_inner["count"], false));
    for (const auto& entry : plan.optimizer.per_parameter_entries())
      inner.emplace(entry, device_part(host_inner[entry], true));
    if (plan.params_are_master()) return Tree::dict(std::move(inner));
    return Tree::dict(
        {{"master", device_part(host.opt_state["master"], true)}, {"opt", Tree::dict(std::move(inner))}});
  };
  const bool params_sharded = plan.strategy.shards_params();
  // pmap needs one mapped argument to know its devices: a token per device.
  auto make_state = pmap(
      [&](const Args&) -> Tree {
        return Tree::tuple({tag_as(device_part(host.params, params_sharded), tags::parameters),
                            tag_as(device_state(), tags::optimizer_state)});
      },
      {.in_axes = Axes(0),
       .out_axes = Axes::tuple({plan.params_axes, plan.state_axes}),
       .axis_name = plan.options.axis_name,
       .devices = plan.options.devices,
       .name = plan.options.name + "_init",
       .trace_once = plan.options.trace_once});
  Tree out = make_state(sim, {Array::abstract({plan.num_devices}, DType::i32)});
  return {out[0], out[1]};
}

Tree TrainStep::operator()(Simulation& sim, const Args& args) const {
  return (*pmapped_)(sim, args);
}

StepResult TrainStep::operator()(Simulation& sim, const TrainState& state, const Array& batch_x,
                                 const Array& batch_y) const {
  Tree out = (*pmapped_)(sim, {state.params, state.opt_state, batch_x, batch_y});
  return {{out[0], out[1]}, out[2].leaf()};
}

std::pair<Array, Array> TrainStep::put_batch(Simulation& sim, const Array& batch_x,
                                             const Array& batch_y) const {
  const Tree put = sim.device_put_sharded(Tree::tuple({batch_x, batch_y}), plan_->options.devices);
  return {put[0].leaf(), put[1].leaf()};
}

Tree TrainStep::full_params(Simulation& sim, const TrainState& state) const {
  const Plan& plan = *plan_;
  const Tree& source = plan.params_are_master() ? state.params : state.opt_state["master"];
  Tree host = sim.device_get(source);
  const bool sharded =
      plan.params_are_master() ? plan.strategy.shards_params() : plan.strategy.shards_optimizer_state();
  return sharded ? unshard_tree(host, plan.abstract_params) : host;
}

void check_zero_options(const ZeroOptions& zero) {
  if (zero.reduce_bucket_elements < 1)
    throw ValueError(
        fmt::format("reduce_bucket_elements must be at least 1, got {}", zero.reduce_bucket_elements));
  if (zero.prefetch_units < 0)
    throw ValueError(fmt::format("prefetch_units must be 0 or more, got {}", zero.prefetch_units));
  if (zero.prefetch_elements < 0)
    throw ValueError(fmt::format("prefetch_elements must be 0 or more, got {}", zero.prefetch_elements));
  if (zero.wrap_units < 0)
    throw ValueError(fmt::format("wrap_units must be 0 or more, got {}", zero.wrap_units));
  if (zero.max_live_elements < 1)
    throw ValueError(fmt::format("max_live_elements must be at least 1, got {}", zero.max_live_elements));
}

Array shard_batch(const Array& batch, int num_devices) {
  if (batch.ndim() < 1 || num_devices < 1 || batch.shape()[0] % num_devices != 0)
    throw ValueError(fmt::format("a batch of shape {} cannot be split evenly over {} devices",
                                 shape_str(batch.shape()), num_devices));
  Shape shape = batch.shape();
  shape[0] /= num_devices;
  shape.insert(shape.begin(), num_devices);
  return reshape(batch, shape);
}

}  // namespace spmdsim::models
