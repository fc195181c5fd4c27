// Optimizers as pure functions over pytrees, with optax's update formulas and defaults:
//   sgd        optax.sgd(lr):                 p' = p - lr * g                     state {}
//   momentum   optax.sgd(lr, momentum=mu):    t' = g + mu * t;  p' = p - lr * t'  state {'trace': like params}
//   adam       optax.adam(lr) (b1 0.9, b2 0.999, eps 1e-8, eps_root 0):
//              m' = (1 - b1) g + b1 m;  v' = (1 - b2) g^2 + b2 v;  c' = c + 1
//              p' = p - lr * (m' / (1 - b1^c')) / (sqrt(v' / (1 - b2^c') + eps_root) + eps)
//                                                                      state {'count': int32[], 'mu', 'nu'}
// Every step is elementwise, so the same update runs on whole leaves or on ZeRO's flat shards of them.
// Inside a pmapped function each op is charged to the device and the results are tagged: new parameters as
// parameters, new state as optimizer_state. b^c' is computed on the device as exp(c' * log(b)) (spmdsim has
// no pow op; optax's power may differ from it in the last bit).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

struct OptimizerStep {
  Tree params;
  Tree state;
};

class Optimizer {
 public:
  enum class Kind { sgd, momentum, adam };

  static Optimizer sgd(double learning_rate);
  static Optimizer momentum(double learning_rate, double momentum = 0.9);
  static Optimizer adam(double learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                        double eps_root = 0.0);

  Kind kind() const { return kind_; }
  std::string_view name() const;
  double learning_rate() const { return learning_rate_; }

  // The same optimizer with each parameter's update run as one fused kernel (ops.hpp, fused), as a fused or
  // multi-tensor optimizer (torch's fused Adam, DeepSpeed's FusedAdam) and XLA's fusion of optax's update
  // run it: one launch per parameter, reading the parameter, its gradient and state and writing the new
  // ones, with no intermediate in device memory. The values are the unfused update's, bit for bit.
  Optimizer fused() const;
  bool is_fused() const { return fused_; }

  // A fresh state for params (zeros shaped like them; Adam's count an int32 0). Host arrays for host params;
  // abstract leaves for abstract params.
  Tree init(const Tree& params) const;
  // One step: optax's update followed by optax.apply_updates. It lets go of each old leaf of state and params
  // as soon as its new one is made: a caller that hands over its only handles on them (std::move, as a step
  // that was given them by donation does) has their buffers released then, as an in-place update would; a
  // caller that keeps its handles keeps the old state live through the update.
  OptimizerStep update(const Tree& grads, Tree state, Tree params) const;

  // The state's entries that hold one buffer per parameter, shaped like the params ('trace'; 'mu', 'nu'):
  // what ZeRO shards. The others (Adam's 'count') are scalars that every device keeps whole.
  std::vector<std::string> per_parameter_entries() const;
  // Bytes of state per parameter element of a dtype of `itemsize` bytes (Adam: 2 * itemsize).
  std::size_t state_bytes_per_parameter(std::size_t itemsize) const;

 private:
  Optimizer(Kind kind, double learning_rate) : kind_(kind), learning_rate_(learning_rate) {}

  Kind kind_;
  double learning_rate_;
  double momentum_ = 0;
  double b1_ = 0.9;
  double b2_ = 0.999;
  double eps_ = 1e-8;
  double eps_root_ = 0;
  bool fused_ = false;
};

}  // namespace spmdsim::models
