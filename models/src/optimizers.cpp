// SGD, momentum and Adam with optax's formulas, leaf by leaf in spmdsim ops.
#include "spmdsim/models/optimizers.hpp"

#include <cmath>
#include <string_view>
#include <vector>
#include <utility>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// zeros shaped like each leaf (abstract for abstract leaves), as optax's jnp.zeros_like.
Tree zeros_like(const Tree& tree) {
  return tree.map([](const Array& leaf) {
    return leaf.is_abstract() ? Array::abstract(leaf.shape(), leaf.dtype()) : Array::zeros(leaf.shape(), leaf.dtype());
  });
}

void check_same_structure(const Tree& grads, const Tree& params, std::string_view what) {
  if (!grads.same_structure(params))
    throw ValueError(fmt::format("optimizer update: {} {} do not match the params {}", what, grads.treedef(),
                                 params.treedef()));
}

Tree tagged(const Tree& tree, MemoryTag tag) { return tag_as(tree, tag); }

}  // namespace

Optimizer Optimizer::sgd(double learning_rate) { return Optimizer(Kind::sgd, learning_rate); }

Optimizer Optimizer::momentum(double learning_rate, double momentum) {
  Optimizer o(Kind::momentum, learning_rate);
  o.momentum_ = momentum;
  return o;
}

Optimizer Optimizer::adam(double learning_rate, double b1, double b2, double eps, double eps_root) {
  Optimizer o(Kind::adam, learning_rate);
  o.b1_ = b1;
  o.b2_ = b2;
  o.eps_ = eps;
  o.eps_root_ = eps_root;
  return o;
}

std::string_view Optimizer::name() const {
  switch (kind_) {
    case Kind::sgd: return "sgd";
    case Kind::momentum: return "momentum";
    default: return "adam";
  }
}

std::vector<std::string> Optimizer::per_parameter_entries() const {
  switch (kind_) {
    case Kind::sgd: return {};
    case Kind::momentum: return {"trace"};
    default: return {"mu", "nu"};
  }
}

std::size_t Optimizer::state_bytes_per_parameter(std::size_t itemsize) const {
  return per_parameter_entries().size() * itemsize;
}

Tree Optimizer::init(const Tree& params) const {
  switch (kind_) {
    case Kind::sgd: return Tree::dict({});
    case Kind::momentum: return Tree::dict({{"trace", zeros_like(params)}});
    default: {
      const bool abstract = !params.leaves().empty() && params.leaves().front().is_abstract();
      Array count = abstract ? Array::abstract({}, DType::i32) : Array::scalar(0, DType::i32);
      return Tree::dict({{"count", count}, {"mu", zeros_like(params)}, {"nu", zeros_like(params)}});
    }
  }
}

namespace {

// The elementwise math of each update, shared by the unfused (op by op) and the fused (a kernel per
// parameter) forms so that both give the same values: optax's, operand order included.
Array sgd_step(const Array& p, const Array& g, double lr) { return p - lr * g; }
Array momentum_trace(const Array& g, const Array& trace, double momentum) { return g + momentum * trace; }
Array adam_moment(const Array& g, const Array& mu, double b1) { return (1.0 - b1) * g + b1 * mu; }
Array adam_second_moment(const Array& g, const Array& nu, double b2) { return (1.0 - b2) * square(g) + b2 * nu; }

struct AdamStep {
  double lr;
  double eps;
  double eps_root;
  Array correction1;  // 1 - b1^count, a float32 scalar
  Array correction2;

  Array operator()(const Array& p, const Array& mu, const Array& nu) const {
    const Array& c1 = mu.dtype() == DType::f32 ? correction1 : astype(correction1, mu.dtype());
    const Array& c2 = nu.dtype() == DType::f32 ? correction2 : astype(correction2, nu.dtype());
    Array mu_hat = mu / c1;
    Array nu_hat = nu / c2;
    // sqrt(nu_hat + eps_root): adding optax's default eps_root of 0 changes nothing, so it is skipped.
    Array denominator = (eps_root == 0.0 ? sqrt(nu_hat) : sqrt(nu_hat + eps_root)) + eps;
    return p - lr * (mu_hat / denominator);
  }
};

}  // namespace

Optimizer Optimizer::fused() const {
  Optimizer copy = *this;
  copy.fused_ = true;
  return copy;
}

OptimizerStep Optimizer::update(const Tree& grads, Tree state, Tree params) const {
  check_same_structure(grads, params, "grads");
  std::vector<Array> p = params.leaves();
  const auto g = grads.leaves();
  // The results' structure, without the old leaves: the update's own handles on them are p and the state's
  // leaves below, each let go of once its new value is made.
  const Tree structure =
      params.map([](const Array& leaf) { return Array::abstract(leaf.shape(), leaf.dtype()); });
  params = Tree();
  const double lr = learning_rate_;
  const auto step_of = [&](const std::vector<Array>& new_p, Tree new_state) -> OptimizerStep {
    return {tagged(structure.rebuild(new_p), tags::parameters),
            tagged(std::move(new_state), tags::optimizer_state)};
  };
  // Per parameter i: its new value and new state buffers, as one fused kernel under fused(); then its old
  // ones are let go of (let_go(i)).
  const auto per_parameter = [&](std::string_view kernel, const auto& inputs_of, const auto& update_of,
                                 const auto& let_go) {
    std::vector<std::vector<Array>> out;
    for (std::size_t i = 0; i < p.size(); ++i) {
      out.push_back(spmdsim::fused(kernel, inputs_of(i), [&] { return update_of(i); }));
      let_go(i);
    }
    return out;
  };
  const auto column = [](const std::vector<std::vector<Array>>& rows, std::size_t k) {
    std::vector<Array> out;
    for (const auto& row : rows) out.push_back(row[k]);
    return out;
  };
  // new[i] = make(i) for every parameter, each old[i] let go of once new[i] is made.
  const auto renew = [&](std::vector<Array>& old, const auto& make) {
    std::vector<Array> out;
    for (std::size_t i = 0; i < old.size(); ++i) {
      out.push_back(make(i));
      old[i] = Array();
    }
    return out;
  };
  switch (kind_) {
    case Kind::sgd: {
      std::vector<Array> new_p;
      if (fused_)
        new_p = column(per_parameter(
                           "sgd_update",
                           [&](std::size_t i) {
                             return std::vector{p[i], g[i]};
                           },
                           [&](std::size_t i) { return std::vector{sgd_step(p[i], g[i], lr)}; },
                           [&](std::size_t i) { p[i] = Array(); }),
                       0);
      else
        new_p = renew(p, [&](std::size_t i) { return sgd_step(p[i], g[i], lr); });
      return {tagged(structure.rebuild(new_p), tags::parameters), state};
    }
    case Kind::momentum: {
      check_same_structure(state["trace"], structure, "momentum trace");
      const double m = momentum_;
      std::vector<Array> t = state["trace"].leaves();
      state = Tree();
      std::vector<Array> trace, new_p;
      if (fused_) {
        const auto rows = per_parameter(
            "momentum_update",
            [&](std::size_t i) {
              return std::vector{p[i], g[i], t[i]};
            },
            [&](std::size_t i) {
              Array ti = momentum_trace(g[i], t[i], m);
              return std::vector{sgd_step(p[i], ti, lr), ti};
            },
            [&](std::size_t i) { p[i] = t[i] = Array(); });
        new_p = column(rows, 0);
        trace = column(rows, 1);
      } else {
        trace = renew(t, [&](std::size_t i) { return momentum_trace(g[i], t[i], m); });
        new_p = renew(p, [&](std::size_t i) { return sgd_step(p[i], trace[i], lr); });
      }
      return step_of(new_p, Tree::dict({{"trace", structure.rebuild(trace)}}));
    }
    default: break;
  }
  check_same_structure(state["mu"], structure, "adam mu");
  check_same_structure(state["nu"], structure, "adam nu");
  const double b1 = b1_;
  const double b2 = b2_;
  std::vector<Array> m = state["mu"].leaves();
  std::vector<Array> v = state["nu"].leaves();
  Array count = state["count"].leaf() + 1.0;  // int32: a whole weak scalar stays int32
  state = Tree();
  // Bias corrections 1 - b^count as float32 scalars on the device.
  Array t = astype(count, DType::f32);
  const AdamStep adam_step{lr, eps_, eps_root_, 1.0 - exp(t * std::log(b1)), 1.0 - exp(t * std::log(b2))};
  std::vector<Array> mu, nu, new_p;
  if (fused_) {
    const auto rows = per_parameter(
        "adam_update",
        [&](std::size_t i) {
          return std::vector{p[i], g[i], m[i], v[i], adam_step.correction1, adam_step.correction2};
        },
        [&](std::size_t i) {
          Array mu_i = adam_moment(g[i], m[i], b1);
          Array nu_i = adam_second_moment(g[i], v[i], b2);
          return std::vector{adam_step(p[i], mu_i, nu_i), mu_i, nu_i};
        },
        [&](std::size_t i) { p[i] = m[i] = v[i] = Array(); });
    new_p = column(rows, 0);
    mu = column(rows, 1);
    nu = column(rows, 2);
  } else {
    // optax's order: every first moment, every second moment, then the updates.
    mu = renew(m, [&](std::size_t i) { return adam_moment(g[i], m[i], b1); });
    nu = renew(v, [&](std::size_t i) { return adam_second_moment(g[i], v[i], b2); });
    new_p = renew(p, [&](std::size_t i) { return adam_step(p[i], mu[i], nu[i]); });
  }
  return step_of(
      new_p, Tree::dict({{"count", count}, {"mu", structure.rebuild(mu)}, {"nu", structure.rebuild(nu)}}));
}

}  // namespace spmdsim::models
