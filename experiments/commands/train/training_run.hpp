// One device count of `spmdsim train`: data-parallel training of a model for a number of steps in one
// Simulation, summarised per step. It runs in a child process of its own (forked_run.hpp): one SimGrid
// engine per process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/host_budget.hpp"
#include "common/json_io.hpp"
#include "common/model_options.hpp"
#include "common/platform_options.hpp"
#include "spmdsim/models/data_parallel.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/units.hpp"

namespace spmdsim::cli {

// What every device count trains: the same model, optimizer, strategy and data.
struct TrainingSetup {
  ModelChoice model;  // a transformer trains abstract only
  models::Optimizer optimizer = models::Optimizer::sgd(0.01);
  models::TrainOptions train_options;
  int steps = 1;
  bool abstract = false;  // shapes only: costs and sizes, no values
  unsigned seed = 0;      // the params' and the batches' random numbers
  // The host reads the loss back after every step, as the tutorials' loop prints it: a device->host transfer
  // per step. Otherwise only the last step's loss is read, after the run.
  bool read_loss_every_step = false;
  // Batches in flight ahead of the step (flax.jax_utils.prefetch_to_device's size): the host puts batch
  // k + prefetch on the devices (Simulation::device_put_sharded) before step k, so its transfer overlaps the
  // steps before it. 0: each step's batch goes with the step's own call.
  int prefetch = 0;
  // SimulationOptions::fusion: XLA's fusion of elementwise chains (--fusion off: every op its own kernel).
  bool fusion = true;
  // SimulationOptions::aggregate_ring_phases: each ring phase of an abstract collective as one transfer each
  // way (--aggregate), what makes a step at 16,384 devices a matter of seconds (docs/performance.md).
  bool aggregate = false;
  // The all-reduce, all-gather and reduce-scatter algorithm (--algorithm); empty: the platform's default
  // (nccl on a node preset of NVIDIA GPUs, else ring).
  std::string algorithm;
};

// The host memory of run_training at `devices` and `global_batch` (host_budget.hpp): the actors, and on real
// data the batches (each made as float64 values, then held as float32 inputs and int32 labels: the batch
// being made, the step's and --prefetch more), the devices' parameters, gradients, reduction scratch and
// optimizer state, and the activations with their gradients. `spmdsim train --devices 8 --batch 100000
// --steps 1` peaks at 931 MB resident (estimate 1.0 GB); with --steps 2 --prefetch 1 --optimizer adam at
// 1238 MB (estimate 1.3 GB).
// `channels`: what a collective runs on at most (collective_channels).
HostDemand training_host_demand(const TrainingSetup& setup, int devices, std::int64_t global_batch,
                                int channels);

// One device count's run, per training step. The times are the mean over the devices of each device's
// total, divided by the steps.
struct TrainingResult {
  int devices = 0;
  std::int64_t global_batch = 0;
  Seconds step_time = 0;  // simulated time of the whole run / steps
  Seconds compute = 0;
  Seconds communication = 0;         // exposed: the time the devices' programs were blocked in collectives
  Seconds hidden_communication = 0;  // collectives' time on the streams that compute overlapped
  Seconds transfer = 0;              // host <-> device: the time the devices waited for it
  Seconds idle = 0;
  Bytes peak_memory = 0;  // the largest of the devices' whole-run peaks
  // MFU's terms: the model's FLOPs per sample (a transformer's sequence: PaLM's 6N + 12 L h s per token
  // times s; the MLP's 6N) and the device's dense matmul peak for the training dtype.
  double model_flops_per_sample = 0;
  FlopsPerSecond peak_flops = 0;
  std::int64_t tokens_per_sample = 0;  // a transformer's s; 0 for the MLP
  std::optional<double> last_loss;     // the last step's loss on the global batch; none when abstract
  std::string platform;                // the platform's description
  std::vector<std::pair<std::string, std::string>> simgrid;  // settings in force
};

// How the child that ran it hands it to the parent.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainingResult, devices, global_batch, step_time, compute, communication,
                                   hidden_communication, transfer, idle, peak_memory, model_flops_per_sample,
                                   peak_flops, tokens_per_sample, last_loss, platform, simgrid)

// Throws UsageError when `model` runs its attention on a kernel (--attention fused-fa1, fused-triton) whose
// rate one of the first `devices` devices of `sim` has not published: the first step would stop on it.
void check_attention_kernel(const Simulation& sim, int devices, const ModelChoice& model);

// A Simulation of `platform` for training on its first `devices` devices, SimGrid getting `simgrid_argv` (the
// program name, then --cfg / --log; the preset's settings where these do not override them). Throws
// UsageError when the platform has fewer devices, or devices without the float32 peak the loss needs.
// `options`: the simulation's settings; `algorithm`: the all-reduce, all-gather and reduce-scatter algorithm
// in them, or empty for the platform's default.
std::unique_ptr<Simulation> start_training_simulation(const ChosenPlatform& platform,
                                                      std::vector<std::string> simgrid_argv, int devices,
                                                      SimulationOptions options,
                                                      const std::string& algorithm = {});

// Trains on the first `devices` devices of `platform` with a global batch of `global_batch` (samples, or a
// transformer's sequences), SimGrid getting
// `simgrid_argv` (the program name, then --cfg / --log). Writes the run's Chrome trace to `trace_path` unless
// it is empty, in place (write_file_through: the caller's OutputFiles::staged path). Throws UsageError when
// the platform has fewer devices. For a process that exits once it has the result (run_in_children): the
// devices' training state is left to the exit, not freed.
TrainingResult run_training(const TrainingSetup& setup, const ChosenPlatform& platform,
                            std::vector<std::string> simgrid_argv, int devices, std::int64_t global_batch,
                            const std::string& trace_path);

}  // namespace spmdsim::cli
