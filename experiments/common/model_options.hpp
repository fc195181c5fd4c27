// Which model a training command runs, from its options: --model (the seeds' MLP, a known transformer shape,
// or `custom` with --layers/--hidden/--heads/--seq-len/--vocab) and --recompute for transformers. Shared by
// `spmdsim train` and `spmdsim memory`; docs/training.md describes the options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <nlohmann/json.hpp>

#include "spmdsim/array.hpp"
#include "spmdsim/models/trainable_model.hpp"
#include "spmdsim/models/transformer.hpp"

namespace spmdsim::cli {

// The options as given (strings, so that each error can say what was given); empty when not given.
struct ModelRequest {
  std::string model;
  std::string layers, hidden, heads, seq_len, vocab;
  std::string recompute;
  std::string attention;
  std::string loss;
  std::string dropout;
};

// Adds the shape options, --recompute, --attention, --loss and --dropout to `options`, read into `request`.
// --model itself is the command's own (train takes one model, memory a list).
void add_model_shape_options(boost::program_options::options_description& options, ModelRequest& request);

// The names --model accepts, for help texts: "mlp, gpt2_small, gpt_7b, gpt3_175b, custom".
std::string model_names_text();

// A model ready to train: the MLP, or a transformer (abstract-only) with its recompute policy.
struct ModelChoice {
  std::string name;                       // "mlp", "gpt2_small", ..., "custom"
  std::vector<std::int64_t> layer_sizes;  // the MLP's; empty for a transformer
  std::optional<models::TransformerConfig> transformer;
  models::Recompute recompute = models::Recompute::none;

  bool is_transformer() const { return transformer.has_value(); }
  std::int64_t num_parameters() const;
  // "the MLP [784, 256, 128, 10] (tanh, softmax cross-entropy)" or "the transformer gpt2_small (L 12, h 768,
  // a 12, s 1024, V 50257, tied; 124,439,808 parameters; recompute none; attention fused; loss fused;
  // dropout on)".
  std::string description() const;
  // The same shape with `layers` blocks (a transformer only): what --fit layers varies.
  ModelChoice with_layers(std::int64_t layers) const;
  // What TrainStep trains: the MLP, or the transformer with its recompute policy.
  models::AnyTrainableModel trainable() const;
  // An abstract batch for `devices` devices of `per_device` samples (MLP) or sequences (transformer) each:
  // the MLP's float32 features and int32 labels, the transformer's int32 tokens and labels [N, b, s].
  std::pair<Array, Array> abstract_batch(int devices, std::int64_t per_device) const;
  // kind, name, shape, parameters (and recompute) for the commands' JSON.
  nlohmann::ordered_json to_json() const;
};

// Checks `request` for the models `names` (the items of --model) and returns them, in order. Throws
// UsageError for no name, a name given twice, an unknown name (listing the valid ones), shape options without
// `custom` in the list or missing with it, a size that is not a whole number from 1, heads that do not divide
// the hidden size, an unknown --recompute, --attention, --loss or --dropout, and any of them without a
// transformer in the list (the MLP ignores them).
std::vector<ModelChoice> choose_models(const std::vector<std::string>& names, const ModelRequest& request);

}  // namespace spmdsim::cli
