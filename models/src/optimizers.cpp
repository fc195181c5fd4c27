// SGD, momentum and Adam with optax's formulas, leaf by leaf in spmdsim ops.
#include "spmdsim/models/optimizers.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// zeros shaped like each leaf (abstract for abstract leaves), as optax's jnp.zeros_like.
Tree zeros_like(const Tree& tree) {
  return tree.map([](const Array& leaf) {
    return leaf.is_abstract() ? Array::abstract(leaf.shape(), leaf.dtype()) : Array::zeros(leaf.shape(), leaf.dtype());
  });
}

// fn(leaf of a, leaf of b, ...) over trees of one structure.
template <class Fn>
std::vector<Array> zip_leaves(const std::vector<Array>& a, const std::vector<Array>& b, Fn&& fn) {
  std::vector<Array> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(fn(a[i], b[i]));
  return out;
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

OptimizerStep Optimizer::update(const Tree& grads, const Tree& state, const Tree& params) const {
  check_same_structure(grads, params, "grads");
  const auto p = params.leaves();
  const auto g = grads.leaves();
  const double lr = learning_rate_;
  switch (kind_) {
    case Kind::sgd: {
      auto new_p = zip_leaves(p, g, [lr](const Array& pi, const Array& gi) { return pi - lr * gi; });
      return {tagged(params.rebuild(new_p), MemoryTag::parameters), state};
    }
    case Kind::momentum: {
      check_same_structure(state["trace"], params, "momentum trace");
      const double mu = momentum_;
      auto trace = zip_leaves(g, state["trace"].leaves(),
                              [mu](const Array& gi, const Array& ti) { return gi + mu * ti; });
      auto new_p = zip_leaves(p, trace, [lr](const Array& pi, const Array& ti) { return pi - lr * ti; });
      return {tagged(params.rebuild(new_p), MemoryTag::parameters),
              tagged(Tree::dict({{"trace", params.rebuild(trace)}}), MemoryTag::optimizer_state)};
    }
    default: break;
  }
  check_same_structure(state["mu"], params, "adam mu");
  check_same_structure(state["nu"], params, "adam nu");
  const double b1 = b1_;
  const double b2 = b2_;
  // optax's update_moment and update_moment_per_elem_norm, operand order included.
  auto mu = zip_leaves(g, state["mu"].leaves(),
                       [b1](const Array& gi, const Array& mi) { return (1.0 - b1) * gi + b1 * mi; });
  auto nu = zip_leaves(g, state["nu"].leaves(),
                       [b2](const Array& gi, const Array& vi) { return (1.0 - b2) * square(gi) + b2 * vi; });
  Array count = state["count"].leaf() + 1.0;  // int32: a whole weak scalar stays int32
  // Bias corrections 1 - b^count as float32 scalars on the device.
  Array t = astype(count, DType::f32);
  Array correction1 = 1.0 - exp(t * std::log(b1));
  Array correction2 = 1.0 - exp(t * std::log(b2));
  const double eps = eps_;
  const double eps_root = eps_root_;
  std::vector<Array> new_p;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Array& c1 = mu[i].dtype() == DType::f32 ? correction1 : astype(correction1, mu[i].dtype());
    const Array& c2 = nu[i].dtype() == DType::f32 ? correction2 : astype(correction2, nu[i].dtype());
    Array mu_hat = mu[i] / c1;
    Array nu_hat = nu[i] / c2;
    // sqrt(nu_hat + eps_root): adding optax's default eps_root of 0 changes nothing, so it is skipped.
    Array denominator = (eps_root == 0.0 ? sqrt(nu_hat) : sqrt(nu_hat + eps_root)) + eps;
    new_p.push_back(p[i] - lr * (mu_hat / denominator));
  }
  Tree new_state = Tree::dict({{"count", count}, {"mu", params.rebuild(mu)}, {"nu", params.rebuild(nu)}});
  return {tagged(params.rebuild(new_p), MemoryTag::parameters), tagged(new_state, MemoryTag::optimizer_state)};
}

}  // namespace spmdsim::models
