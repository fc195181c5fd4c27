#include "common/model_options.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/models/mlp.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;

// The seeds' MLP: MNIST-sized inputs, two tanh hidden layers, ten classes.
const std::vector<std::int64_t> kSeedsMlp = {784, 256, 128, 10};

struct KnownTransformer {
  const char* name;
  models::TransformerConfig (*config)();
};
constexpr KnownTransformer kKnownTransformers[] = {
    {"gpt2_small", models::gpt2_small}, {"gpt_7b", models::gpt_7b}, {"gpt3_175b", models::gpt3_175b}};

// The transformer as TrainStep trains it: TrainableModel's value_and_grad has no recompute argument, so the
// policy travels with the model.
struct RecomputingTransformer {
  models::Transformer transformer;
  models::Recompute recompute;

  Tree init_abstract(DType dtype) const { return transformer.init_abstract(dtype); }
  models::LossAndGrads value_and_grad(const models::LayerFetch& fetch, const Array& tokens,
                                      const Array& labels, const models::GradsReady& ready) const {
    return transformer.value_and_grad(fetch, tokens, labels, recompute, ready);
  }
  std::vector<int> fetch_order() const { return transformer.fetch_order(); }
};

models::Recompute parse_recompute(const std::string& name) {
  for (auto r : {models::Recompute::none, models::Recompute::selective, models::Recompute::full})
    if (name == models::recompute_name(r)) return r;
  throw UsageError(fmt::format("unknown --recompute '{}'; valid: none, selective, full", name));
}

models::Attention parse_attention(const std::string& name) {
  for (auto a : {models::Attention::fused, models::Attention::fused_fa1, models::Attention::fused_triton,
                 models::Attention::naive})
    if (name == models::attention_name(a)) return a;
  throw UsageError(
      fmt::format("unknown --attention '{}'; valid: fused, fused-fa1, fused-triton, naive", name));
}

models::LossForm parse_loss(const std::string& name) {
  for (auto l : {models::LossForm::fused, models::LossForm::unfused, models::LossForm::unfused_fp32})
    if (name == models::loss_form_name(l)) return l;
  throw UsageError(fmt::format("unknown --loss '{}'; valid: fused, unfused, unfused_fp32", name));
}

// 124439808 -> "124,439,808".
std::string grouped(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text.push_back(',');
    text.push_back(digits[i]);
  }
  return text;
}

// One item of --model (choose_models checks the list).
ModelChoice choose_model(const std::string& name, const ModelRequest& request) {
  ModelChoice choice{.name = name};
  choice.recompute = request.recompute.empty() ? models::Recompute::none : parse_recompute(request.recompute);
  if (name == "mlp") {
    choice.layer_sizes = kSeedsMlp;
    return choice;
  }
  for (const auto& known : kKnownTransformers)
    if (name == known.name) choice.transformer = known.config();
  if (name == "custom") {
    if (request.layers.empty() || request.hidden.empty() || request.heads.empty() ||
        request.seq_len.empty() || request.vocab.empty())
      throw UsageError("--model custom needs --layers, --hidden, --heads, --seq-len and --vocab");
    choice.transformer = models::TransformerConfig{.layers = parse_count(request.layers, "--layers", 1),
                                                   .hidden = parse_count(request.hidden, "--hidden", 1),
                                                   .heads = parse_count(request.heads, "--heads", 1),
                                                   .seq_len = parse_count(request.seq_len, "--seq-len", 1),
                                                   .vocab = parse_count(request.vocab, "--vocab", 1)};
    try {
      models::Transformer check(*choice.transformer);
    } catch (const ValueError& e) {
      throw UsageError(fmt::format("--model custom: {}", e.what()));
    }
  }
  if (!choice.transformer)
    throw UsageError(fmt::format("unknown --model '{}'; valid: {}", name, model_names_text()));
  if (!request.attention.empty()) choice.transformer->attention = parse_attention(request.attention);
  if (!request.loss.empty()) choice.transformer->loss = parse_loss(request.loss);
  if (!request.dropout.empty()) choice.transformer->dropout = parse_on_off(request.dropout, "--dropout");
  return choice;
}

}  // namespace

void add_model_shape_options(po::options_description& options, ModelRequest& request) {
  options.add_options()("layers", po::value(&request.layers), "--model custom: transformer blocks L")(
      "hidden", po::value(&request.hidden), "--model custom: hidden size h")(
      "heads", po::value(&request.heads), "--model custom: attention heads a (dividing h)")(
      "seq-len", po::value(&request.seq_len), "--model custom: sequence length s")(
      "vocab", po::value(&request.vocab), "--model custom: vocabulary V (tied embeddings, FFN 4h)")(
      "recompute", po::value(&request.recompute),
      "transformers: activation recomputation none (default), selective (the attention core) or full "
      "(every block)")(
      "attention", po::value(&request.attention),
      "transformers: the attention core as one FlashAttention-style kernel at FlashAttention-2's rate, "
      "fused (default), the same at FlashAttention 1.x's rate (PyTorch 2.0-2.1's "
      "scaled_dot_product_attention), "
      "fused-fa1 (A100, H100 and H200 presets), or at FlashAttention's Triton kernel's rate, fused-triton "
      "(A100 presets), or materialised with its [s, s] scores in device memory, naive")(
      "loss", po::value(&request.loss),
      "transformers: the cross-entropy as one kernel, fused (default, as XLA fuses it), or as PyTorch's "
      "nn.CrossEntropyLoss on materialised logits, unfused (up to three [b*s, V] tensors at once), or "
      "unfused_fp32 (the same under torch.autocast, in float32)")(
      "dropout", po::value(&request.dropout),
      "transformers: GPT-2's dropout on the attention probabilities and both residual branches, on "
      "(default), or off (as llm.c and nanoGPT pretrain)");
}

std::string model_names_text() {
  std::vector<std::string> names = {"mlp"};
  for (const auto& known : kKnownTransformers) names.emplace_back(known.name);
  names.emplace_back("custom");
  return fmt::format("{}", fmt::join(names, ", "));
}

std::int64_t ModelChoice::num_parameters() const {
  if (transformer) return models::Transformer(*transformer).num_parameters();
  return models::Mlp(layer_sizes).num_parameters();
}

std::string ModelChoice::description() const {
  if (!transformer)
    return fmt::format("the MLP [{}] (tanh, softmax cross-entropy)", fmt::join(layer_sizes, ", "));
  const auto& c = *transformer;
  return fmt::format(
      "the transformer {} (L {}, h {}, a {}, s {}, V {}, {}; {} parameters; recompute {}; attention {}; "
      "loss {}; dropout {})",
      name, c.layers, c.hidden, c.heads, c.seq_len, c.vocab, c.tied_embeddings ? "tied" : "untied",
      grouped(num_parameters()), models::recompute_name(recompute), models::attention_name(c.attention),
      models::loss_form_name(c.loss), c.dropout ? "on" : "off");
}

ModelChoice ModelChoice::with_layers(std::int64_t layers) const {
  ModelChoice changed = *this;
  changed.transformer->layers = layers;
  return changed;
}

models::AnyTrainableModel ModelChoice::trainable() const {
  if (transformer) return RecomputingTransformer{models::Transformer(*transformer), recompute};
  return models::Mlp(layer_sizes, models::Activation::tanh, models::Loss::softmax_cross_entropy);
}

std::pair<Array, Array> ModelChoice::abstract_batch(int devices, std::int64_t per_device) const {
  if (transformer) {
    const Array tokens = Array::abstract({devices, per_device, transformer->seq_len}, DType::i32);
    return {tokens, tokens};
  }
  return {Array::abstract({devices, per_device, layer_sizes.front()}, DType::f32),
          Array::abstract({devices, per_device}, DType::i32)};
}

nlohmann::ordered_json ModelChoice::to_json() const {
  if (!transformer)
    return {{"kind", "mlp"},
            {"name", name},
            {"layer_sizes", layer_sizes},
            {"activation", "tanh"},
            {"loss", "softmax_cross_entropy"},
            {"parameters", num_parameters()}};
  const auto& c = *transformer;
  return {{"kind", "transformer"},
          {"name", name},
          {"layers", c.layers},
          {"hidden", c.hidden},
          {"heads", c.heads},
          {"seq_len", c.seq_len},
          {"vocab", c.vocab},
          {"ffn_hidden", models::Transformer(c).ffn_hidden()},
          {"tied_embeddings", c.tied_embeddings},
          {"parameters", num_parameters()},
          {"recompute", models::recompute_name(recompute)},
          {"attention", models::attention_name(c.attention)},
          {"loss", models::loss_form_name(c.loss)},
          {"dropout", c.dropout}};
}

std::vector<ModelChoice> choose_models(const std::vector<std::string>& names, const ModelRequest& request) {
  if (names.empty()) throw UsageError("--model names no model");
  const auto named = [&](const std::string& name) { return std::count(names.begin(), names.end(), name); };
  for (const auto& name : names)
    if (named(name) > 1) throw UsageError(fmt::format("--model names '{}' twice", name));
  const bool shape_given = !request.layers.empty() || !request.hidden.empty() || !request.heads.empty() ||
                           !request.seq_len.empty() || !request.vocab.empty();
  if (shape_given && !named("custom"))
    throw UsageError(
        fmt::format("--layers, --hidden, --heads, --seq-len and --vocab give the shape of --model custom, "
                    "which --model '{}' "
                    "does not name",
                    fmt::join(names, ",")));
  std::vector<ModelChoice> models;
  for (const auto& name : names) models.push_back(choose_model(name, request));
  if (std::none_of(models.begin(), models.end(), [](const auto& m) { return m.is_transformer(); })) {
    if (!request.recompute.empty())
      throw UsageError("--recompute applies to transformers; the MLP keeps every activation");
    if (!request.attention.empty())
      throw UsageError("--attention applies to transformers; the MLP has no attention");
    if (!request.loss.empty())
      throw UsageError("--loss applies to transformers; the MLP computes its loss as it always does");
    if (!request.dropout.empty())
      throw UsageError("--dropout applies to transformers; the MLP has no dropout");
  }
  return models;
}

}  // namespace spmdsim::cli
