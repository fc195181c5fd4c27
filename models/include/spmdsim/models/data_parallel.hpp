// Data-parallel training steps for any TrainableModel (trainable_model.hpp: the MLP, the transformer), as one
// pmapped function over
//   (params, opt_state, batch_x, batch_y) -> (params, opt_state, loss)
// with the batch split over the devices along axis 0 and the model state kept on the devices between steps
// (pmap results stay device-resident; passed back with the same axes they are used in place). Strategies,
// each one file of models/src/strategies/ registered by name in registry.cpp there:
//
//   dp     replicated params and optimizer state (in_axes / out_axes None); each device computes the loss
//          and gradients of its shard, the gradients are averaged with pmean (an all-reduce), and every
//          device applies the identical update.
//   zero1  ZeRO stage 1 (P_os): params replicated, optimizer state sharded 1/N per device (flat shards, see
//          sharding.hpp); gradients all-reduced (pmean) as in dp; each device updates its shard of the
//          params with its shard of the state, then the params are all-gathered.
//   zero2  ZeRO stage 2 (P_os+g): as zero1, but the gradients are reduce-scattered (psum_scatter / N) in
//          buckets of zero.reduce_bucket_elements as each backward completes them (DeepSpeed's
//          reduce_bucket_size; on the communication stream under overlap_comm), so each device keeps its 1/N
//          shard of the averaged gradients and, of the full-size ones, only the buckets not yet reduced.
//   dp-overlap  dp with the gradients bucketed and all-reduced while the backward pass continues, as PyTorch
//          DDP does: each unit's gradients join buckets as the backward finishes them (last unit first, a
//          unit's leaves in reverse order); a bucket is closed once it holds bucket_bytes or more, flattened
//          into one buffer (tagged communication_buckets) and its pmean started on the device's communication
//          stream (async_collectives.hpp); the last, partial bucket is started when the backward ends. Then
//          every bucket is waited for, unflattened, and the update is dp's. With micro_batches > 1 only the
//          last micro-batch's backward overlaps (DDP's no_sync for the others).
//   zero3  ZeRO stage 3 (P_os+g+p), FSDP's FULL_SHARD: params sharded too; each fetch unit's params (every
//          leaf, to its shape in init_abstract()) are all-gathered just before the unit's forward and again
//          before its backward, and freed once the pass is done with them; the gathers of the next units in
//          the model's fetch_order() are started ahead on the communication stream (zero.prefetch_units,
//          prefetch_elements, max_live_elements), so they overlap the current unit's compute; zero.wrap_units
//          fetch units are gathered together as one FSDP wrap unit; gradients
//          reduce-scattered in buckets as under zero2; each device updates its own shard; nothing is gathered
//          after the update.
//
// Orthogonal options:
//   micro_batches k  gradient accumulation: each device's batch is cut into k equal micro-batches; their
//                    gradients are summed and divided by k. dp, dp-overlap and zero1 reduce that sum once
//                    (DDP's no_sync); zero2 and zero3 reduce-scatter every micro-batch's gradients as its
//                    backward completes them and sum their shards (DeepSpeed), or with zero.no_sync reduce
//                    the sum once, as FSDP's no_sync.
//   mixed_bf16       bf16 compute with fp32 master weights: params are a bf16 copy, the optimizer state holds
//                    the fp32 master weights ('master') next to the optimizer's own state ('opt'); forward
//                    and backward run in bf16 (loss in fp32), gradients are bf16. reduce_dtype chooses the
//                    communication: bf16 (the gradients are reduced in bf16 and cast to fp32 for the update)
//                    or f32 (cast before the reduction). The update runs in fp32 on the master weights, and
//                    the new bf16 params are cast from them (ZeRO 1/2 all-gather the bf16 params). Under
//                    zero3, param_shard_dtype f32 keeps FSDP's layout instead: fp32 param shards that are
//                    the master weights (no 'master' entry), cast to bf16 for each gather, and fp32
//                    gradient shards.
//
// Memory tags inside the step (memory_tags.hpp): params are tagged parameters, optimizer state (fp32 master
// weights included, as the ZeRO paper counts them) optimizer_state, gradients gradients, saved activations
// activations. Just before the optimizer update every piece of model state is live; the step records what
// each device holds then (memory_before_update()). At the end of the call pmap retags every result as
// outputs. Under donate_state the update holds the model states and what it makes itself (the fp32
// gradients, its intermediates), never an old and a new copy of a leaf: each old parameter, master weight and
// optimizer buffer is released as its new one is made, and the new params take the old ones' place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmdsim/models/gradient_buckets.hpp"
#include "spmdsim/models/memory_tags.hpp"  // the tags of memory_before_update()
#include "spmdsim/models/optimizers.hpp"
#include "spmdsim/models/trainable_model.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim {
class Simulation;
}

namespace spmdsim::models {

enum class Strategy { dp, dp_overlap, zero1, zero2, zero3 };

struct StrategyInfo {
  Strategy strategy;
  std::string_view name;  // as --strategy spells it
  std::string_view description;
};
// Every registered strategy, in the order they are listed: dp, dp-overlap, zero1, zero2, zero3.
const std::vector<StrategyInfo>& training_strategies();
std::string_view strategy_name(Strategy strategy);
// A registered strategy's name; anything else is a ValueError listing them.
Strategy parse_strategy(std::string_view name);

enum class Precision { fp32, mixed_bf16 };

inline constexpr Bytes kDefaultBucketBytes = 25.0 * 1024 * 1024;

// The ZeRO-2/3 and FSDP knobs, with DeepSpeed's defaults where it has the knob (deepspeed/runtime/zero/
// config.py; docs/training.md lists the sources).
struct ZeroOptions {
  // zero2, zero3: a gradient bucket is closed once it holds this many elements or more (reduce_bucket_size,
  // 5e8).
  std::int64_t reduce_bucket_elements = 500'000'000;
  // zero2, zero3: bucket reductions on the communication stream, overlapped with the backward; otherwise the
  // program waits for each. Unset: DeepSpeed's rule, on for stage 3 and off for stages 1 and 2.
  std::optional<bool> overlap_comm;
  // zero3: units whose gather is started ahead of their use (FSDP's forward and backward prefetch limits,
  // 1); 0: each unit gathered when the pass asks for it.
  int prefetch_units = 1;
  // zero3: a further unit is prefetched only while fewer elements than this are being prefetched
  // (stage3_prefetch_bucket_size, 5e7 in code).
  std::int64_t prefetch_elements = 50'000'000;
  // zero3: prefetching stops where the gathered elements, the unit in use included, would exceed this
  // (stage3_max_live_parameters, 1e9).
  std::int64_t max_live_elements = 1'000'000'000;
  // zero3: fetch units (the transformer's embedding, blocks and head; the MLP's layers) per FSDP wrap unit,
  // gathered as one collective and kept while the pass works on them; 0: the whole model as one unit (FSDP's
  // default without an auto_wrap_policy). 1, one per layer, is what transformer_auto_wrap_policy gives.
  int wrap_units = 1;
  // zero2, zero3 with micro_batches > 1: the micro-batches before the last only accumulate full-size
  // gradients, and the last one's backward reduce-scatters their sum (FSDP's no_sync). Off: every
  // micro-batch's backward reduce-scatters its own gradients and each device sums its shards, as DeepSpeed's
  // stages 2 and 3 always do and FSDP does outside no_sync (Composer's trainer under FSDP).
  bool no_sync = false;

  bool overlaps(Strategy strategy) const { return overlap_comm.value_or(strategy == Strategy::zero3); }
};
// ValueError naming the knob and what it allows.
void check_zero_options(const ZeroOptions& zero);

struct TrainOptions {
  Strategy strategy = Strategy::dp;
  int micro_batches = 1;  // gradient accumulation steps per update
  Precision precision = Precision::fp32;
  DType reduce_dtype = DType::bf16;  // mixed_bf16 only: bf16 or f32
  // mixed_bf16 under zero3 only: the dtype each device keeps its param shards in. bf16: a bf16 copy beside
  // the fp32 master shards in the optimizer state (DeepSpeed's ZeRO-3, the ZeRO paper's count). f32: the
  // shards are the master weights, each unit's shard is cast to bf16 for its gather, and the reduced gradient
  // shards are kept in fp32 (FSDP's MixedPrecision: a full-precision FlatParameter shard).
  DType param_shard_dtype = DType::bf16;
  // dp-overlap: a bucket is closed once it holds this many bytes or more (PyTorch DDP's bucket_cap_mb = 25).
  Bytes bucket_bytes = kDefaultBucketBytes;
  ZeroOptions zero;
  // The step takes over the old params and optimizer state (pmap's donate_argnums) and releases each old leaf
  // as soon as its new one is made, as PyTorch's and DeepSpeed's in-place updates and JAX's donate_argnums
  // do; the state passed in is deleted. Off (JAX's default): the old and the new state are both live through
  // the update.
  bool donate_state = false;
  std::string axis_name = "batch";
  // Global device indices of the step (pmap's devices); by default the first num_devices.
  std::optional<std::vector<int>> devices;
  std::string name = "train_step";  // the pmap call's name in reports
  // On abstract state, run the step's program once and replay it on every device (PmapOptions::trace_once):
  // the same times and memory, for a fraction of the simulator's work at thousands of devices. The sharding
  // strategies, whose devices each keep their own shards, and dp-overlap's asynchronous buckets run it on
  // every device anyway. Off: every device runs it (to compare, or to time the simulator).
  bool trace_once = true;

  // The dtype the step reduces its gradients in: reduce_dtype under mixed_bf16, float32 under fp32.
  DType reduction_dtype() const { return precision == Precision::mixed_bf16 ? reduce_dtype : DType::f32; }
  // True where the params a device keeps are the fp32 weights the update runs on: under fp32, and under
  // mixed_bf16 with fp32 param shards; otherwise the optimizer state holds the fp32 master weights.
  bool params_are_master() const {
    return precision != Precision::mixed_bf16 || param_shard_dtype == DType::f32;
  }
  // The dtype of the params a device keeps (whole or shards): fp32 where they are the master weights, bf16
  // otherwise.
  DType param_dtype() const { return params_are_master() ? DType::f32 : DType::bf16; }
};

// Model state in a strategy's layout: host arrays from init(), device-resident after a step.
//   params     dp, dp-overlap, zero1, zero2: the full tree (fp32, or bf16 under mixed_bf16), replicated.
//              zero3: each leaf as flat shards, host view [N, shard] (fp32 with param_shard_dtype f32).
//   opt_state  dp, dp-overlap: the optimizer's state (mixed: {'master': fp32 params, 'opt': state}, unless
//              the params are the master weights: TrainOptions::params_are_master()), replicated.
//              zero: the same with every per-parameter buffer (and 'master') as flat shards [N, shard];
//              Adam's scalar count replicated.
struct TrainState {
  Tree params;
  Tree opt_state;
};

struct StepResult {
  TrainState state;
  Array loss;  // the mean loss over the whole global batch (pmean of the devices' losses), replicated
};

class TrainStep {
 public:
  TrainStep(AnyTrainableModel model, Optimizer optimizer, int num_devices, TrainOptions options = {});

  const AnyTrainableModel& model() const;
  const Optimizer& optimizer() const;
  const TrainOptions& options() const;
  int num_devices() const;

  // Host: full fp32 params (as the model's init gives them, or its init_abstract()) laid out for this
  // strategy, with a fresh optimizer state.
  TrainState init(const Tree& params) const;

  // Abstract models only: the state of init(model.init_abstract()) made on the devices themselves, each
  // device its own part, as jax.jit(init, out_shardings=...) does, so the first step sends only the batch
  // (the host does not send every device its Psi-sized state). The result is device-resident, laid out for
  // this step.
  TrainState init_on_devices(Simulation& sim) const;

  // One step, like a PmappedFunction: args are (params, opt_state, batch_x, batch_y), each batch as the
  // model's value_and_grad takes it with a leading device axis: [N, per-device batch, ...] (the MLP: features
  // and outputs or int32 labels; the transformer: int32 tokens and labels [N, b, s]); returns (params,
  // opt_state, loss).
  Tree operator()(Simulation& sim, const Args& args) const;
  StepResult operator()(Simulation& sim, const TrainState& state, const Array& batch_x,
                        const Array& batch_y) const;

  // Host: starts copying a batch, laid out as operator() takes it, to the step's devices and returns at once
  // with it device-resident (Simulation::device_put_sharded): a step given it waits only for what has not yet
  // arrived. flax.jax_utils.prefetch_to_device keeps batches in flight ahead of the step this way.
  std::pair<Array, Array> put_batch(Simulation& sim, const Array& batch_x, const Array& batch_y) const;

  // Host: the full fp32 parameters (the master weights under mixed precision), read from the devices and
  // un-sharded.
  Tree full_params(Simulation& sim, const TrainState& state) const;

  const PmappedFunction& pmapped() const;
  // in_axes of (params, opt_state): None where replicated, 0 where sharded.
  const Axes& params_axes() const;
  const Axes& state_axes() const;
  // dp-overlap, zero2, zero3: the gradient buckets (gradient_buckets.hpp) in the order they are started;
  // empty otherwise.
  const std::vector<GradientBucket>& buckets() const;

  // Per device (in call order) of the last call: what its buffers held, by tag, just before the update.
  const std::vector<MemoryByTag>& memory_before_update() const;
  // Per device of the last call: what its buffers held, by tag, at its peak in the call before the update
  // (over the forward, backward and reduction: what the strategy's schedule sets, apart from the update's
  // new state).
  const std::vector<MemoryByTag>& peak_before_update() const;
  // Per device of the last call: the most its buffers held from the update's start to the step's end (the
  // state, what the update allocates, and under donate_state no old leaf beside its new one).
  const std::vector<Bytes>& peak_of_update() const;

 private:
  struct Plan;
  std::shared_ptr<const Plan> plan_;
  struct StepMemory {
    std::vector<MemoryByTag> before_update, peak_before_update;
    std::vector<Bytes> peak_of_update;
    std::vector<std::size_t> update_start;  // memory_mark() as the update starts
  };
  std::shared_ptr<StepMemory> memory_;
  std::shared_ptr<PmappedFunction> pmapped_;
};

// Host: a global batch [B, ...] as pmap wants it, [N, B / N, ...] (as the tutorials' shard_batch).
Array shard_batch(const Array& batch, int num_devices);

// The ZeRO paper's per-device model-state bytes (Rajbhandari et al. 2020, Sec. 3 and 5) for psi parameters
// on N devices, with p bytes of parameters, g of gradients and k of optimizer state per parameter:
//   dp (p + g + k) psi, zero1 (p + g) psi + k psi / N, zero2 p psi + (g + k) psi / N, zero3 (p + g + k) psi /
//   N.
// Without p, g, k: mixed-precision Adam, the paper's case (p = g = 2, k = 12): dp 16 psi, ..., zero3 16 psi /
// N.
double zero_model_state_bytes(Strategy strategy, std::int64_t psi, int num_devices, double p = 2,
                              double g = 2, double k = 12);

}  // namespace spmdsim::models
