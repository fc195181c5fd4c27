// What TrainStep needs of a model, and the value type it keeps one in. A trainable model gives
//   init_abstract(dtype)          its params as abstract arrays: a list of fetch units (value_and_grad.hpp)
//   value_and_grad(fetch, x, y, ready)
//                                 the loss of a batch and gradients shaped like the params, asking for each
//                                 unit's params through fetch when the pass needs them and telling ready
//                                 each unit's gradients as the backward finishes them
//   fetch_order()                 the units value_and_grad fetches, in order (ZeRO-3 prefetches by it)
// The MLP and the transformer both qualify.
//
// Why a concept and a type-erased holder rather than an abstract base class: the models are plain value types
// that know nothing of training, and their passes take more than the step needs (the transformer's
// value_and_grad has a defaulted recompute argument, which a three-argument virtual could only override by
// an overload that makes the common call ambiguous). The concept checks any model as it is; the holder keeps
// TrainStep one non-template class, compiled once in data_parallel.cpp.
#pragma once

#include <concepts>
#include <memory>
#include <utility>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/models/value_and_grad.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

template <class M>
concept TrainableModel = std::copy_constructible<M> &&
    requires(const M& model, DType dtype, const LayerFetch& fetch, const Array& x, const Array& y,
             const GradsReady& ready) {
  { model.init_abstract(dtype) } -> std::same_as<Tree>;
  { model.value_and_grad(fetch, x, y, ready) } -> std::same_as<LossAndGrads>;
  { model.fetch_order() } -> std::same_as<std::vector<int>>;
};

// Any TrainableModel, held by value (copies share the immutable model).
class AnyTrainableModel {
 public:
  // Not a candidate for copies of the holder itself (a copy would otherwise wrap the holder in another).
  template <class M>
  requires(!std::same_as<M, AnyTrainableModel> && TrainableModel<M>) AnyTrainableModel(
      M model)  // NOLINT(google-explicit-constructor): TrainStep(mlp, ...) reads as it should
      : model_(std::make_shared<Holder<M>>(std::move(model))) {}

  Tree init_abstract(DType dtype = DType::f32) const { return model_->init_abstract(dtype); }
  LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& x, const Array& y,
                              const GradsReady& ready = {}) const {
    return model_->value_and_grad(fetch, x, y, ready);
  }
  std::vector<int> fetch_order() const { return model_->fetch_order(); }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual Tree init_abstract(DType dtype) const = 0;
    virtual LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& x, const Array& y,
                                        const GradsReady& ready) const = 0;
    virtual std::vector<int> fetch_order() const = 0;
  };
  template <class M>
  struct Holder final : Interface {
    explicit Holder(M m) : model(std::move(m)) {}
    Tree init_abstract(DType dtype) const override { return model.init_abstract(dtype); }
    LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& x, const Array& y,
                                const GradsReady& ready) const override {
      return model.value_and_grad(fetch, x, y, ready);
    }
    std::vector<int> fetch_order() const override { return model.fetch_order(); }
    M model;
  };
  std::shared_ptr<const Interface> model_;
};

}  // namespace spmdsim::models
