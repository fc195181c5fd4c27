// The transformer's closed forms and its forward and backward pass in spmdsim ops.
#include "spmdsim/models/transformer.hpp"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "layers.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/memory_tags.hpp"
#include "spmdsim/models/losses.hpp"
#include "spmdsim/models/memory_tags.hpp"
#include "spmdsim/ops.hpp"

namespace spmdsim::models {
namespace {

// Forward matmul FLOPs per token of one block: qkv 6h^2, proj 2h^2, MLP 4hf, q k^T and probs v 2sh each.
double block_forward_flops_per_token(double h, double f, double s) {
  return 8 * h * h + 4 * h * f + 4 * s * h;
}

// ---------------------------------------------------------------------------------------------------------
// Parameter shapes

Tree dense_params(std::int64_t in, std::int64_t out, DType dtype) {
  return Tree::dict({{"bias", Array::abstract({out}, dtype)}, {"kernel", Array::abstract({in, out}, dtype)}});
}

Tree norm_params(std::int64_t hidden, DType dtype) {
  return Tree::dict(
      {{"bias", Array::abstract({hidden}, dtype)}, {"scale", Array::abstract({hidden}, dtype)}});
}

Tree embedding_unit(const TransformerConfig& c, DType dtype) {
  return Tree::dict({{"position_embedding", Array::abstract({c.seq_len, c.hidden}, dtype)},
                     {"token_embedding", Array::abstract({c.vocab, c.hidden}, dtype)}});
}

Tree block_unit(const TransformerConfig& c, std::int64_t ffn, DType dtype) {
  const auto h = c.hidden;
  return Tree::dict(
      {{"attention",
        Tree::dict({{"proj", dense_params(h, h, dtype)}, {"qkv", dense_params(h, 3 * h, dtype)}})},
       {"ln_1", norm_params(h, dtype)},
       {"ln_2", norm_params(h, dtype)},
       {"mlp", Tree::dict({{"fc", dense_params(h, ffn, dtype)}, {"proj", dense_params(ffn, h, dtype)}})}});
}

Tree head_unit(const TransformerConfig& c, DType dtype) {
  std::map<std::string, Tree> items{{"ln_f", norm_params(c.hidden, dtype)}};
  if (!c.tied_embeddings)
    items.emplace("lm_head", Tree::dict({{"kernel", Array::abstract({c.hidden, c.vocab}, dtype)}}));
  return Tree::dict(std::move(items));
}

// Checks a fetched unit against the expected structure and shapes (the expected dtype does not matter: any
// one floating dtype will do); returns the unit's dtype, the dtype it computes in.
DType check_unit(const Tree& got, const Tree& expected, std::string_view what) {
  if (!got.same_structure(expected))
    throw ValueError(
        fmt::format("transformer {}: expected {}, got {}", what, expected.treedef(), got.treedef()));
  const auto got_leaves = got.leaves();
  const auto expected_leaves = expected.leaves();
  const DType dtype = got_leaves.front().dtype();
  for (std::size_t i = 0; i < got_leaves.size(); ++i) {
    const Array& leaf = got_leaves[i];
    if (leaf.shape() != expected_leaves[i].shape())
      throw ValueError(fmt::format("transformer {}: leaf {} has shape {}, expected {}", what, i,
                                   shape_str(leaf.shape()), shape_str(expected_leaves[i].shape())));
    if (!is_floating(leaf.dtype()) || leaf.dtype() != dtype)
      throw TypeError(
          fmt::format("transformer {}: every parameter must share one floating dtype, got {} and {}", what,
                      dtype_name(dtype), dtype_name(leaf.dtype())));
    if (!leaf.is_abstract())
      throw ValueError(
          fmt::format("transformer {}: the transformer is a cost model and runs on abstract arrays "
                      "only (init_abstract()), got parameters with values",
                      what));
  }
  return dtype;
}

// ---------------------------------------------------------------------------------------------------------
// Attention and the kept tensors

// Releases a kept tensor to the caller, so that its device buffer goes once the caller is done with it.
Array release(Array& kept) {
  Array out = std::move(kept);
  kept = Array();
  return out;
}

// [b*s, h] -> [b*a, s, h/a] and back: the heads as a batch of matrices (the transposes are copies).
Array split_heads(const Array& x, std::int64_t seq, std::int64_t heads) {
  const auto batch = x.shape()[0] / seq;
  const auto dim = x.shape()[1] / heads;
  return reshape(transpose(reshape(x, {batch, seq, heads, dim}), {0, 2, 1, 3}), {batch * heads, seq, dim});
}

Array merge_heads(const Array& x, std::int64_t heads) {
  const auto batch = x.shape()[0] / heads;
  const auto seq = x.shape()[1];
  const auto dim = x.shape()[2];
  return reshape(transpose(reshape(x, {batch, heads, seq, dim}), {0, 2, 1, 3}), {batch * seq, heads * dim});
}

struct AttentionProbs {
  Array probs;    // softmax(q k^T / sqrt(d) + causal mask)
  Array keep;     // its dropout mask; empty without dropout
  Array dropped;  // dropout(probs); probs itself without dropout
};

// The causal mask is a constant [s, s] added to the scores (-inf above the diagonal), as GPT-2 adds it.
AttentionProbs attention_probs(const Array& q, const Array& k, bool with_dropout) {
  const auto seq = q.shape()[1];
  const Array causal_mask = Array::abstract({seq, seq}, q.dtype());
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape()[2]));
  AttentionProbs out;
  const Array scores = matmul(q, k, MatmulTranspose{.b = true});
  out.probs = fused("masked_softmax", {scores, causal_mask}, [&] {
                return std::vector{softmax(scores * scale + causal_mask)};
              }).front();
  if (!with_dropout) {
    out.dropped = out.probs;
    return out;
  }
  out.keep = dropout_keep(out.probs);
  out.dropped = dropout(out.probs, out.keep);
  return out;
}

// The gradient through a dropout: masked by the mask the forward kept (released here), or the gradient
// itself without dropout.
Array through_dropout(const Array& grad, Array& keep, bool with_dropout) {
  return with_dropout ? dropout(grad, release(keep)) : grad;
}

struct Heads {
  Array q, k, v;  // [b*a, s, h/a]
};

// The qkv projection's output [b*s, 3h] as per-head q, k and v (slices and head transposes, copies).
Heads split_qkv(const Array& qkv, std::int64_t seq, std::int64_t heads) {
  const auto h = qkv.shape()[1] / 3;
  return {split_heads(slice(qkv, 1, 0, h), seq, heads), split_heads(slice(qkv, 1, h, 2 * h), seq, heads),
          split_heads(slice(qkv, 1, 2 * h, 3 * h), seq, heads)};
}

struct FusedAttention {
  Array out;  // [b*s, h]
  Array lse;  // [b*a, s], float32
};

// One FlashAttention forward kernel on the packed qkv [b*s, 3h], read in place with its heads' strides (as
// flash_attn_qkvpacked_func and cuDNN take it): writes the output in [b*s, h] layout and the softmax's
// float32 log-sum-exp. The body computes them with the materialised ops, which the kernel neither charges nor
// places (their max stands in for the log-sum-exp: same shape).
FusedAttention fused_attention_forward(const Array& qkv, std::int64_t seq, std::int64_t heads, double flops,
                                       bool with_dropout, AttentionKernel kernel) {
  const AttentionShape shape{seq, qkv.shape()[1] / (3 * heads), kernel};
  std::vector<Array> out = fused_attention("flash_attention", {qkv}, shape, flops, [&] {
    const Heads x = split_qkv(qkv, seq, heads);
    const AttentionProbs p = attention_probs(x.q, x.k, with_dropout);
    return std::vector{merge_heads(matmul(p.dropped, x.v), heads), astype(max(p.probs, -1), DType::f32)};
  });
  return {std::move(out[0]), std::move(out[1])};
}

// One FlashAttention backward kernel: reads the packed qkv, the output, the log-sum-exp and the output's
// gradient, recomputes the scores and writes the packed dqkv [b*s, 3h], at 2.5x the forward's FLOPs
// (FlashAttention's count).
Array fused_attention_backward(const Array& qkv, const Array& out, const Array& lse, const Array& d_out,
                               std::int64_t seq, std::int64_t heads, double forward_flops, bool with_dropout,
                               AttentionKernel kernel) {
  const AttentionShape shape{seq, qkv.shape()[1] / (3 * heads), kernel};
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
  return fused_attention("flash_attention_backward", {qkv, out, lse, d_out}, shape, 2.5 * forward_flops,
                         [&] {
                           const Heads x = split_qkv(qkv, seq, heads);
                           const Array d_o = split_heads(d_out, seq, heads);
                           AttentionProbs p = attention_probs(x.q, x.k, with_dropout);
                           const Array d_dropped = matmul(d_o, x.v, MatmulTranspose{.b = true});
                           const Array d_scores =
                               softmax_backward(p.probs, through_dropout(d_dropped, p.keep, with_dropout)) *
                               scale;
                           return std::vector{concatenate(
                               {merge_heads(matmul(d_scores, x.k), heads),
                                merge_heads(matmul(d_scores, x.q, MatmulTranspose{.a = true}), heads),
                                merge_heads(matmul(p.dropped, d_o, MatmulTranspose{.a = true}), heads)},
                               1)};
                         })
      .front();
}

// residual + dropout(branch) as one fused kernel, its mask kept in `keep` for the backward; without dropout,
// the residual add alone.
Array residual_add(const Array& residual, const Array& branch, bool with_dropout, Array& keep) {
  if (!with_dropout) return residual + branch;
  keep = dropout_keep(branch);
  return fused("dropout_residual", {residual, branch, keep},
               [&] { return std::vector{residual + dropout(branch, keep)}; })
      .front();
}

BlockActivations tagged(BlockActivations kept) {
  for (Array* a : {&kept.input, &kept.ln_1, &kept.qkv, &kept.q, &kept.k, &kept.v, &kept.lse, &kept.probs,
                   &kept.probs_keep, &kept.probs_dropped, &kept.context, &kept.proj_keep, &kept.mid,
                   &kept.ln_2, &kept.fc, &kept.gelu, &kept.mlp_keep})
    *a = tag_as(*a, tags::activations);
  return kept;
}

void check_int_batch(const Array& a, std::string_view what, std::int64_t seq_len) {
  if (a.dtype() != DType::i32 || a.ndim() != 2 || a.shape()[1] != seq_len || a.shape()[0] < 1)
    throw ValueError(fmt::format("transformer {}: expected int32 of shape (batch, {}), got {}{}", what,
                                 seq_len, dtype_name(a.dtype()), shape_str(a.shape())));
  if (!a.is_abstract())
    throw ValueError(
        fmt::format("transformer {}: the transformer is a cost model and runs on abstract arrays "
                    "only, got {} with values",
                    what, what));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Configurations and closed forms

TransformerConfig gpt2_small() {
  return {.layers = 12, .hidden = 768, .heads = 12, .seq_len = 1024, .vocab = 50257};
}

TransformerConfig gpt3_175b() {
  return {.layers = 96, .hidden = 12288, .heads = 96, .seq_len = 2048, .vocab = 50257};
}

TransformerConfig gpt_7b() {
  return {
      .layers = 32, .hidden = 4096, .heads = 32, .seq_len = 2048, .vocab = 32000, .tied_embeddings = false};
}

std::string_view attention_name(Attention attention) {
  switch (attention) {
    case Attention::fused:
      return "fused";
    case Attention::fused_fa1:
      return "fused-fa1";
    case Attention::fused_triton:
      return "fused-triton";
    case Attention::naive:
      return "naive";
  }
  return "?";
}

bool is_fused(Attention attention) {
  return attention != Attention::naive;
}

AttentionKernel attention_kernel(Attention attention) {
  switch (attention) {
    case Attention::fused_fa1:
      return AttentionKernel::flash1;
    case Attention::fused_triton:
      return AttentionKernel::flash_triton;
    case Attention::fused:
    case Attention::naive:
      return AttentionKernel::flash2;
  }
  return AttentionKernel::flash2;
}

std::string_view loss_form_name(LossForm loss) {
  switch (loss) {
    case LossForm::fused:
      return "fused";
    case LossForm::unfused:
      return "unfused";
    case LossForm::unfused_fp32:
      return "unfused_fp32";
  }
  throw std::logic_error("unknown loss form");
}

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    default:
      return "full";
  }
}

Transformer::Transformer(TransformerConfig config) : config_(std::move(config)) {
  const auto& c = config_;
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.seq_len < 1 || c.vocab < 1 ||
      (c.ffn_hidden && *c.ffn_hidden < 1))
    throw ValueError(
        fmt::format("transformer sizes must be positive, got layers {}, hidden {}, heads {}, "
                    "seq_len {}, vocab {}, ffn_hidden {}",
                    c.layers, c.hidden, c.heads, c.seq_len, c.vocab, ffn_hidden()));
  if (c.hidden % c.heads != 0)
    throw ValueError(
        fmt::format("transformer: {} heads do not divide the hidden size {}", c.heads, c.hidden));
}

std::int64_t Transformer::ffn_hidden() const {
  return config_.ffn_hidden.value_or(4 * config_.hidden);
}

std::int64_t Transformer::parameters_per_block() const {
  const auto h = config_.hidden;
  const auto f = ffn_hidden();
  const auto layer_norms = 2 * 2 * h;
  const auto attention = (h * 3 * h + 3 * h) + (h * h + h);
  const auto mlp = (h * f + f) + (f * h + h);
  return layer_norms + attention + mlp;
}

std::int64_t Transformer::num_parameters() const {
  const auto& c = config_;
  const auto embeddings = c.vocab * c.hidden + c.seq_len * c.hidden;
  const auto head = 2 * c.hidden + (c.tied_embeddings ? 0 : c.hidden * c.vocab);
  return c.layers * parameters_per_block() + embeddings + head;
}

double Transformer::forward_flops_per_token() const {
  const auto& c = config_;
  const double h = static_cast<double>(c.hidden);
  return static_cast<double>(c.layers) * block_forward_flops_per_token(h, static_cast<double>(ffn_hidden()),
                                                                       static_cast<double>(c.seq_len)) +
         2 * h * static_cast<double>(c.vocab);
}

double Transformer::training_flops_per_token(Recompute recompute) const {
  const auto& c = config_;
  const double h = static_cast<double>(c.hidden);
  const double layers = static_cast<double>(c.layers);
  const double blocks = layers * block_forward_flops_per_token(h, static_cast<double>(ffn_hidden()),
                                                               static_cast<double>(c.seq_len));
  const double logits = 2 * h * static_cast<double>(c.vocab);
  double recomputed = 0;
  if (recompute == Recompute::full) recomputed = blocks;
  if (recompute == Recompute::selective) recomputed = layers * 4 * static_cast<double>(c.seq_len) * h;
  return 3 * (blocks + logits) + recomputed;
}

double Transformer::model_flops_per_token() const {
  const auto& c = config_;
  return 6 * static_cast<double>(num_parameters()) +
         12 * static_cast<double>(c.layers) * static_cast<double>(c.hidden) * static_cast<double>(c.seq_len);
}

double Transformer::fused_attention_forward_flops(std::int64_t micro_batch) const {
  const double s = static_cast<double>(config_.seq_len);
  return 2 * static_cast<double>(micro_batch) * s * s * static_cast<double>(config_.hidden);
}

double Transformer::activation_bytes_per_block(std::int64_t micro_batch, Recompute recompute,
                                               DType dtype) const {
  const auto& c = config_;
  const double e = static_cast<double>(itemsize(dtype));
  const double b = static_cast<double>(micro_batch);
  const double s = static_cast<double>(c.seq_len);
  const double sbh = s * b * static_cast<double>(c.hidden);
  const double sbf = s * b * static_cast<double>(ffn_hidden());
  const double as2b = static_cast<double>(c.heads) * s * s * b;
  const double mask = 1;  // bytes per dropout-mask element
  const double masks = c.dropout ? mask * 2 * sbh : 0;
  if (is_fused(c.attention)) {
    const double lse = 4 * static_cast<double>(c.heads) * s * b;
    return recompute == Recompute::full ? e * sbh : e * (8 * sbh + 2 * sbf) + masks + lse;
  }
  switch (recompute) {
    case Recompute::none:
      return c.dropout ? e * (8 * sbh + 2 * sbf + 2 * as2b) + mask * (2 * sbh + as2b)
                       : e * (8 * sbh + 2 * sbf + as2b);
    case Recompute::selective:
      return e * (8 * sbh + 2 * sbf) + masks;
    default:
      return e * sbh;
  }
}

Tree Transformer::init_abstract(DType dtype) const {
  std::vector<Tree> units{embedding_unit(config_, dtype)};
  for (std::int64_t l = 0; l < config_.layers; ++l) units.push_back(block_unit(config_, ffn_hidden(), dtype));
  units.push_back(head_unit(config_, dtype));
  return Tree::list(std::move(units));
}

// ---------------------------------------------------------------------------------------------------------
// The pass

BlockForward Transformer::block_forward(const Tree& block, const Array& x, Recompute recompute) const {
  const DType dtype = check_unit(block, block_unit(config_, ffn_hidden(), DType::f32), "block");
  const auto s = config_.seq_len;
  const auto h = config_.hidden;
  const auto a = config_.heads;
  if (x.ndim() != 2 || x.shape()[1] != h || x.shape()[0] % s != 0 || x.shape()[0] == 0 ||
      x.dtype() != dtype || !x.is_abstract())
    throw ValueError(
        fmt::format("transformer block input: expected an abstract {} array of shape (batch * {}, {}), "
                    "got {}{}{}",
                    dtype_name(dtype), s, h, x.is_abstract() ? "abstract " : "", dtype_name(x.dtype()),
                    shape_str(x.shape())));
  const Tree& attention = block["attention"];
  const Tree& mlp = block["mlp"];

  BlockActivations kept{.recompute = recompute, .input = x};
  kept.ln_1 = layer_norm(x, block["ln_1"]);
  if (is_fused(config_.attention)) {
    kept.qkv = dense(kept.ln_1, attention["qkv"]);
    FusedAttention fa =
        fused_attention_forward(kept.qkv, s, a, fused_attention_forward_flops(x.shape()[0] / s),
                                config_.dropout, attention_kernel(config_.attention));
    kept.context = std::move(fa.out);
    kept.lse = std::move(fa.lse);
  } else {
    Heads heads = split_qkv(dense(kept.ln_1, attention["qkv"]), s, a);
    kept.q = std::move(heads.q);
    kept.k = std::move(heads.k);
    kept.v = std::move(heads.v);
    AttentionProbs probs = attention_probs(kept.q, kept.k, config_.dropout);
    kept.context = merge_heads(matmul(probs.dropped, kept.v), a);
    kept.probs = std::move(probs.probs);
    if (config_.dropout) {
      kept.probs_keep = std::move(probs.keep);
      kept.probs_dropped = std::move(probs.dropped);
    }
  }
  kept.mid = residual_add(x, dense(kept.context, attention["proj"]), config_.dropout, kept.proj_keep);
  kept.ln_2 = layer_norm(kept.mid, block["ln_2"]);
  kept.fc = dense(kept.ln_2, mlp["fc"]);
  kept.gelu = gelu(kept.fc);
  Array out = residual_add(kept.mid, dense(kept.gelu, mlp["proj"]), config_.dropout, kept.mlp_keep);

  if (recompute != Recompute::none && config_.attention == Attention::naive) {
    kept.probs = Array();
    kept.probs_keep = Array();
    kept.probs_dropped = Array();
  }
  if (recompute == Recompute::full) kept = BlockActivations{.recompute = recompute, .input = x};
  return {out, tagged(std::move(kept))};
}

BlockBackward Transformer::block_backward(const Tree& block, BlockActivations saved,
                                          const Array& dout) const {
  check_unit(block, block_unit(config_, ffn_hidden(), DType::f32), "block");
  const auto s = config_.seq_len;
  const auto a = config_.heads;
  if (saved.recompute == Recompute::full) {
    Array input = release(saved.input);
    saved = block_forward(block, input, Recompute::none).saved;
  } else if (saved.recompute == Recompute::selective && config_.attention == Attention::naive) {
    // Megatron checkpoints the whole core attention, so its recompute reruns the attention-over-v matmul too,
    // although the backward pass does not need that output.
    AttentionProbs probs = attention_probs(saved.q, saved.k, config_.dropout);
    matmul(probs.dropped, saved.v);
    saved.probs = tag_as(probs.probs, tags::activations);
    if (config_.dropout) {
      saved.probs_keep = tag_as(probs.keep, tags::activations);
      saved.probs_dropped = tag_as(probs.dropped, tags::activations);
    }
  }
  const Tree& attention = block["attention"];
  const Tree& mlp = block["mlp"];

  // MLP branch: out = mid + dropout(proj(gelu(fc(ln_2(mid))))).
  InputAndGrads mlp_proj = dense_backward(release(saved.gelu), mlp["proj"],
                                          through_dropout(dout, saved.mlp_keep, config_.dropout));
  InputAndGrads mlp_fc =
      dense_backward(release(saved.ln_2), mlp["fc"], gelu_backward(release(saved.fc), mlp_proj.dx));
  mlp_proj.dx = Array();
  InputAndGrads ln_2 = layer_norm_backward(release(saved.mid), block["ln_2"], mlp_fc.dx);
  mlp_fc.dx = Array();
  const Array d_mid = dout + ln_2.dx;
  ln_2.dx = Array();

  // Attention branch: mid = input + dropout(proj(attention(ln_1(input)))).
  InputAndGrads proj =
      dense_backward(is_fused(config_.attention) ? saved.context : release(saved.context), attention["proj"],
                     through_dropout(d_mid, saved.proj_keep, config_.dropout));
  Array d_qkv;
  if (is_fused(config_.attention)) {
    const std::int64_t batch = proj.dx.shape()[0] / s;
    d_qkv = fused_attention_backward(release(saved.qkv), release(saved.context), release(saved.lse),
                                     release(proj.dx), s, a, fused_attention_forward_flops(batch),
                                     config_.dropout, attention_kernel(config_.attention));
  } else {
    const Array d_context = split_heads(release(proj.dx), s, a);
    const Array v = release(saved.v);
    const Array k = release(saved.k);
    const Array q = release(saved.q);
    const Array d_dropped = matmul(d_context, v, MatmulTranspose{.b = true});
    const Array d_v = matmul(config_.dropout ? release(saved.probs_dropped) : saved.probs, d_context,
                             MatmulTranspose{.a = true});
    const Array d_scores = softmax_backward(release(saved.probs),
                                            through_dropout(d_dropped, saved.probs_keep, config_.dropout)) *
                           (1.0 / std::sqrt(static_cast<double>(head_dim())));
    d_qkv =
        concatenate({merge_heads(matmul(d_scores, k), a),
                     merge_heads(matmul(d_scores, q, MatmulTranspose{.a = true}), a), merge_heads(d_v, a)},
                    1);
  }
  InputAndGrads qkv = dense_backward(release(saved.ln_1), attention["qkv"], d_qkv);
  InputAndGrads ln_1 = layer_norm_backward(release(saved.input), block["ln_1"], qkv.dx);
  qkv.dx = Array();

  Tree grads = Tree::dict({{"attention", Tree::dict({{"proj", proj.grads}, {"qkv", qkv.grads}})},
                           {"ln_1", ln_1.grads},
                           {"ln_2", ln_2.grads},
                           {"mlp", Tree::dict({{"fc", mlp_fc.grads}, {"proj", mlp_proj.grads}})}});
  return {d_mid + ln_1.dx, std::move(grads)};
}

LossAndGrads Transformer::value_and_grad(const LayerFetch& fetch, const Array& tokens, const Array& labels,
                                         Recompute recompute, const GradsReady& ready) const {
  const auto& c = config_;
  check_int_batch(tokens, "tokens", c.seq_len);
  check_int_batch(labels, "labels", c.seq_len);
  if (labels.shape() != tokens.shape())
    throw ValueError(fmt::format("transformer labels: shape {} differs from the tokens' {}",
                                 shape_str(labels.shape()), shape_str(tokens.shape())));
  const auto batch = tokens.shape()[0];
  const auto rows = batch * c.seq_len;
  const int head = static_cast<int>(c.layers) + 1;
  const auto fetch_checked = [&](int unit) {
    Tree params = fetch(unit);
    if (unit == 0) check_unit(params, embedding_unit(c, DType::f32), "embedding");
    if (unit == head) check_unit(params, head_unit(c, DType::f32), "head");
    return params;  // blocks are checked by block_forward / block_backward
  };
  // The logits' weight, [V, h] (tied) or [h, V].
  const auto output_table = [&](const Tree& head_params) {
    return c.tied_embeddings ? fetch_checked(0)["token_embedding"].leaf()
                             : head_params["lm_head"]["kernel"].leaf();
  };

  // Embedding: x0 = token_embedding[tokens] + position_embedding. spmdsim has no gather op, so the token
  // rows' lookup and add are not charged; x0 is the position embedding broadcast over the batch, which has
  // x0's shape, dtype and bytes.
  Array x;
  {
    const Tree embedding = fetch_checked(0);
    x = reshape(broadcast_to(embedding["position_embedding"].leaf(), {batch, c.seq_len, c.hidden}),
                {rows, c.hidden});
  }
  std::vector<BlockActivations> saved;
  for (int unit = 1; unit < head; ++unit) {
    BlockForward f = block_forward(fetch_checked(unit), x, recompute);
    saved.push_back(std::move(f.saved));
    x = std::move(f.out);
  }

  // Head and loss (in float32 at least, as the MLP's).
  Array final_input = tag_as(x, tags::activations);
  x = Array();
  Array final_output;
  Array d_logits;
  Array loss;
  {
    const Tree head_params = fetch_checked(head);
    final_output = tag_as(layer_norm(final_input, head_params["ln_f"]), tags::activations);
    const Array table = output_table(head_params);
    Array logits = matmul(final_output, table, MatmulTranspose{.b = c.tied_embeddings});
    const Array flat_labels = reshape(labels, {rows});
    if (c.loss != LossForm::fused) {
      const DType kernels = c.loss == LossForm::unfused_fp32 ? DType::f32 : logits.dtype();
      LossAndSeed both = unfused_softmax_cross_entropy(std::move(logits), flat_labels, kernels);
      d_logits = std::move(both.seed);
      loss = std::move(both.loss);
    } else {
      // The cast to float32, the log-softmax, the loss and its seed as one fused kernel: the float32 logits
      // never reach device memory.
      const DType compute = logits.dtype();
      std::vector<Array> ls = fused("softmax_cross_entropy", {logits, flat_labels}, [&] {
        const Array wide = compute == loss_dtype(compute) ? logits : astype(logits, loss_dtype(compute));
        LossAndSeed both = loss_and_seed(Loss::softmax_cross_entropy, wide, flat_labels);
        return std::vector{both.seed.dtype() == compute ? both.seed : astype(both.seed, compute), both.loss};
      });
      logits = Array();
      d_logits = std::move(ls[0]);
      loss = std::move(ls[1]);
    }
  }

  // Backward: head, blocks last to first, embedding.
  std::vector<Tree> grads(static_cast<std::size_t>(head) + 1);
  Array d_token_embedding;
  Array dx;
  {
    const Tree head_params = fetch_checked(head);
    const Array table = output_table(head_params);
    Tree head_grads;
    if (c.tied_embeddings) {
      d_token_embedding = tag_as(matmul(d_logits, final_output, MatmulTranspose{.a = true}), tags::gradients);
      dx = matmul(d_logits, table);
    } else {
      head_grads = Tree::dict(
          {{"kernel", tag_as(matmul(final_output, d_logits, MatmulTranspose{.a = true}), tags::gradients)}});
      dx = matmul(d_logits, table, MatmulTranspose{.b = true});
    }
    d_logits = Array();
    final_output = Array();
    InputAndGrads ln_f = layer_norm_backward(release(final_input), head_params["ln_f"], dx);
    dx = std::move(ln_f.dx);
    grads.back() = c.tied_embeddings ? Tree::dict({{"ln_f", ln_f.grads}})
                                     : Tree::dict({{"ln_f", ln_f.grads}, {"lm_head", head_grads}});
    head_grads = Tree();
    ln_f.grads = Tree();
    if (ready) ready(head, std::exchange(grads.back(), Tree()));
  }
  for (int unit = head - 1; unit >= 1; --unit) {
    BlockBackward b =
        block_backward(fetch_checked(unit), std::move(saved[static_cast<std::size_t>(unit - 1)]), dx);
    dx = std::move(b.dx);
    if (ready)
      ready(unit, std::exchange(b.grads, Tree()));
    else
      grads[static_cast<std::size_t>(unit)] = std::move(b.grads);
  }
  {
    const Tree embedding = fetch_checked(0);
    const Array& position = embedding["position_embedding"].leaf();
    const Array d_position = sum(reshape(dx, {batch, c.seq_len, c.hidden}), 0);
    // The token rows' scatter-add is not charged (no scatter op); untied, the table's gradient is still a
    // zero-filled [V, h] buffer, written here as a broadcast.
    if (!c.tied_embeddings)
      d_token_embedding = broadcast_to(Array::abstract({}, position.dtype()), {c.vocab, c.hidden});
    grads.front() =
        tag_as(Tree::dict({{"position_embedding", d_position}, {"token_embedding", d_token_embedding}}),
               tags::gradients);
    d_token_embedding = Array();
    if (ready) ready(0, std::exchange(grads.front(), Tree()));
  }
  return {loss, Tree::list(std::move(grads))};
}

std::vector<int> Transformer::fetch_order() const {
  const int head = static_cast<int>(config_.layers) + 1;
  std::vector<int> order;
  for (int unit = 0; unit <= head; ++unit) order.push_back(unit);
  if (config_.tied_embeddings) order.push_back(0);
  order.push_back(head);
  if (config_.tied_embeddings) order.push_back(0);
  for (int unit = head - 1; unit >= 0; --unit) order.push_back(unit);
  return order;
}

LossAndGrads Transformer::value_and_grad(const LayerFetch& fetch, const Array& tokens, const Array& labels,
                                         const GradsReady& ready) const {
  return value_and_grad(fetch, tokens, labels, Recompute::none, ready);
}

LossAndGrads Transformer::value_and_grad(const Tree& params, const Array& tokens, const Array& labels,
                                         Recompute recompute) const {
  if (!std::holds_alternative<Tree::List>(params.node()) ||
      static_cast<std::int64_t>(params.size()) != config_.layers + 2)
    throw ValueError(
        fmt::format("transformer params: expected a list of {} units (embedding, {} blocks, head), "
                    "got {}",
                    config_.layers + 2, config_.layers, params.treedef()));
  return value_and_grad([&params](int unit) { return params[static_cast<std::size_t>(unit)]; }, tokens,
                        labels, recompute);
}

}  // namespace spmdsim::models
