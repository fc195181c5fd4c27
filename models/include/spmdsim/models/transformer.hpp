// A GPT-style decoder-only transformer (GPT-2 / Megatron convention) as a cost model: exact parameter counts,
// the matmul FLOPs per token of Narayanan et al. 2021, the activation memory of Korthikanti et al. 2022, and
// a forward and backward pass in spmdsim ops on abstract arrays that charges those FLOPs and holds those
// bytes on the simulated device.
//
// The model (L layers, hidden size h, a heads, sequence length s, vocabulary V, FFN size f = 4h unless set):
//   x0 = token_embedding[tokens] + position_embedding            [b*s, h]
//   per block (pre-LayerNorm, as GPT-2 and Megatron):
//     y   = x + dropout(proj(attention(ln_1(x))))                 qkv: h -> 3h, proj: h -> h, with biases
//     out = y + dropout(mlp_proj(gelu(mlp_fc(ln_2(y)))))          fc: h -> f, proj: f -> h, with biases
//   attention: softmax(q k^T / sqrt(h/a) + causal mask), dropout, times v, per head
//   logits = ln_f(x_L) @ token_embedding^T (tied, GPT-2 / GPT-3) or @ lm_head [h, V] (untied)
//   loss: softmax cross-entropy against int32 labels, in float32 (fused) or as PyTorch's (unfused)
//
// Parameters are a list of fetch units (value_and_grad.hpp), with Flax's leaf names:
//   [ {'position_embedding': [s, h], 'token_embedding': [V, h]},
//     {'attention': {'proj': {'bias', 'kernel'}, 'qkv': {...}}, 'ln_1': {'bias', 'scale'}, 'ln_2': {...},
//      'mlp': {'fc': {'bias', 'kernel'}, 'proj': {...}}}                           one per block, L of them
//     {'ln_f': {'bias', 'scale'}} (+ 'lm_head': {'kernel': [h, V]} when untied) ]
//
// The pass is for abstract arrays only (like jax.eval_shape): it costs and sizes everything and computes no
// values; some of its kernels (the dropout masks, the embedding lookup) stand in for ops spmdsim lacks.
// docs/training.md lists what is charged exactly and what is left out.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "spmdsim/array.hpp"
#include "spmdsim/device_spec.hpp"
#include "spmdsim/models/value_and_grad.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::models {

// How the attention core (q k^T, softmax, dropout, times v) runs:
//   fused  one FlashAttention-style kernel forward and one backward (Dao 2023): no [s, s] tensor in device
//          memory, the forward keeps its output and the softmax statistics, the backward recomputes the
//          scores; its FLOPs are the kernel's own count (causal: half the score matmuls; the backward 2.5x
//          the forward) at the device's attention rate (DeviceSpec::attention_rate).
//   fused_fa1  the same kernel and memory at the rate of FlashAttention's first CUDA kernel (flash-attn 1.x;
//          PyTorch 2.0 and 2.1's scaled_dot_product_attention), where the device has published one.
//   fused_triton  the same kernel and memory at the rate of FlashAttention's Triton kernel (flash-attn 1.x,
//          MosaicML llm-foundry's attn_impl triton), where the device has published one.
//   naive  the materialised form: the scores, the probabilities and their dropout in device memory, each op
//          its own kernel (Korthikanti et al. 2022's count).
enum class Attention { fused, fused_fa1, fused_triton, naive };
std::string_view attention_name(Attention attention);  // "fused", "fused-fa1", "fused-triton", "naive"
bool is_fused(Attention attention);
// The kernel whose rate a fused attention runs at (FlashAttention-2's for naive, which has none).
AttentionKernel attention_kernel(Attention attention);

// How the loss over the logits runs (losses.hpp):
//   fused    one kernel for the cast to float32, the log-softmax, the loss and its gradient, as XLA fuses
//            them: the logits and their gradient are the only [b*s, V] tensors in device memory.
//   unfused  nn.CrossEntropyLoss on materialised logits, as a PyTorch model computes it (Hugging Face's
//            GPT2LMHeadModel): up to three [b*s, V] tensors live at once (unfused_softmax_cross_entropy),
//            in the logits' dtype, as a model in half precision runs it (DeepSpeed, FSDP);
//   unfused_fp32  the same under torch.autocast, which runs cross_entropy in float32: the shifted copy is
//            cast to float32 and the log-softmax and its gradients are float32.
enum class LossForm { fused, unfused, unfused_fp32 };
std::string_view loss_form_name(LossForm loss);

struct TransformerConfig {
  std::int64_t layers = 0;                 // L
  std::int64_t hidden = 0;                 // h
  std::int64_t heads = 0;                  // a; must divide h
  std::int64_t seq_len = 0;                // s
  std::int64_t vocab = 0;                  // V
  std::optional<std::int64_t> ffn_hidden;  // f; 4h when not given
  bool tied_embeddings = true;             // the logits reuse the token embedding (GPT-2, GPT-3)
  Attention attention = Attention::fused;
  LossForm loss = LossForm::fused;
  // GPT-2's dropout after the attention probabilities and on both residual branches (its masks drawn,
  // kept and applied); false trains without it, as llm.c and nanoGPT's pretraining configuration do.
  bool dropout = true;
};

// Known shapes. gpt_7b is LLaMA-7B's shape (Touvron et al. 2023, Table 2: L 32, h 4096, a 32; s 2048,
// V 32000) with GPT-style blocks (LayerNorm, GeLU MLP of 4h, biases, learned positions) and LLaMA's untied
// output head.
TransformerConfig gpt2_small();  // L 12, h 768, a 12, s 1024, V 50257, tied
TransformerConfig gpt3_175b();   // L 96, h 12288, a 96, s 2048, V 50257, tied
TransformerConfig gpt_7b();      // L 32, h 4096, a 32, s 2048, V 32000, untied

// Activation recomputation (Korthikanti et al. 2022):
//   none       every block keeps what its backward needs;
//   selective  the attention core (q k^T, softmax, its dropout, times v) is recomputed in the backward pass,
//              so the s^2-sized tensors are not kept;
//   full       a block keeps only its input and reruns its forward before its backward.
enum class Recompute { none, selective, full };
std::string_view recompute_name(Recompute recompute);

// What one block's forward keeps for its backward, tagged as activations on the device. Under selective
// recompute the three attention-score tensors stay empty; under full only `input` is kept. Without dropout
// the masks and probs_dropped stay empty (the attention-over-v matmul reads probs).
struct BlockActivations {
  Recompute recompute = Recompute::none;
  Array input;          // ln_1's input, the block's input          [b*s, h]
  Array ln_1;           // the qkv matmul's input                      [b*s, h]
  Array qkv;            // fused: the qkv matmul's output, which the
                        // attention kernels read in place             [b*s, 3h]
  Array q, k, v;        // naive: per head                             [b*a, s, h/a]
  Array lse;            // fused: the softmax's log-sum-exp, float32   [b*a, s]
  Array probs;          // naive: softmax output                       [b*a, s, s]
  Array probs_keep;     // its dropout mask, bool                      [b*a, s, s]
  Array probs_dropped;  // the attention-over-v matmul's input         [b*a, s, s]
  Array context;        // the proj matmul's input                     [b*s, h]
  Array proj_keep;      // dropout mask after proj, bool               [b*s, h]
  Array mid;            // ln_2's input (first residual)               [b*s, h]
  Array ln_2;           // the fc matmul's input                       [b*s, h]
  Array fc;             // GeLU's input                                [b*s, f]
  Array gelu;           // the mlp proj matmul's input                 [b*s, f]
  Array mlp_keep;       // dropout mask after the MLP, bool            [b*s, h]
};

struct BlockForward {
  Array out;  // [b*s, h], a temporary until the next block keeps it
  BlockActivations saved;
};

struct BlockBackward {
  Array dx;    // d loss / d input, [b*s, h]
  Tree grads;  // the block's structure, tagged gradients
};

class Transformer {
 public:
  // Throws ValueError for a non-positive size or heads that do not divide the hidden size.
  explicit Transformer(TransformerConfig config);

  const TransformerConfig& config() const { return config_; }
  std::int64_t ffn_hidden() const;
  std::int64_t head_dim() const { return config_.hidden / config_.heads; }

  // Parameter counts: 4h + 4h^2 + 4h (attention) + 2hf + f + h (MLP) per block (12h^2 + 13h at f = 4h);
  // Vh + sh embeddings; 2h final LayerNorm; hV more when untied.
  std::int64_t parameters_per_block() const;
  std::int64_t num_parameters() const;

  // Matmul FLOPs per token (Narayanan et al. 2021, appendix; Megatron-LM's num_floating_point_operations):
  // forward 24 L h^2 (1 + s/(6h)) + 2hV at f = 4h, in general L (8h^2 + 4hf + 4sh) + 2hV; the backward
  // pass twice the forward. Recomputation adds one more forward of the blocks (full) or of the two
  // attention matmuls, 4sh per block (selective); the logits are never recomputed.
  double forward_flops_per_token() const;
  double training_flops_per_token(Recompute recompute = Recompute::none) const;
  // Model FLOPs per token for MFU (PaLM, Chowdhery et al. 2022, Appendix B; nanoGPT's estimate_mfu):
  // 6N + 12 L h s, N every parameter; recomputation is not counted (it is hardware, not model, FLOPs).
  double model_flops_per_token() const;
  // FLOPs the fused attention's forward kernel charges for one block and b sequences: the two score
  // matmuls, causal, as FlashAttention counts them, 2 b s^2 h (half of 4 b s^2 h); its backward kernel
  // charges 2.5x that (the score recomputation and four gradient matmuls).
  double fused_attention_forward_flops(std::int64_t micro_batch) const;

  // Bytes one block keeps for its backward (Korthikanti et al. 2022, Eq. 1 and Sec. 5), with activations of
  // `dtype` and 1-byte dropout masks: sbh (34 + 5as/h) for 16-bit activations and f = 4h (none), 34 sbh
  // (selective), 2 sbh (full). In general e (8sbh + 2sbf + 2as^2b) + 2sbh + as^2b bytes for e-byte
  // activations, e (8sbh + 2sbf) + 2sbh (selective), e sbh (full). With fused attention no [s, s] tensor
  // is kept and the forward keeps the float32 log-sum-exp instead: e (8sbh + 2sbf) + 2sbh + 4asb under none
  // and selective alike (the fused backward recomputes the scores anyway), e sbh (full). Without dropout
  // no mask is kept and the probabilities are the attention-over-v matmul's input: the 2sbh and as^2b mask
  // bytes go, and under none the naive form keeps e as^2b of scores instead of 2e as^2b.
  double activation_bytes_per_block(std::int64_t micro_batch, Recompute recompute = Recompute::none,
                                    DType dtype = DType::bf16) const;

  // The parameters' shapes as abstract arrays (fetch units as above).
  Tree init_abstract(DType dtype = DType::f32) const;

  // One block on the calling device, in the dtype of its params: x is [b*s, h], abstract. What the forward
  // keeps is tagged activations; the backward releases each kept tensor once it is used.
  BlockForward block_forward(const Tree& block, const Array& x, Recompute recompute = Recompute::none) const;
  BlockBackward block_backward(const Tree& block, BlockActivations saved, const Array& dout) const;

  // The loss of int32 tokens and labels [b, s] (abstract) and its gradients, unit by unit through fetch:
  // forward 0, 1..L, L+1 (and 0 again for tied logits), backward in reverse, telling `ready` each unit's
  // gradients as they are finished: the head, blocks L..1, the embedding (last, also when tied: the tied
  // table's gradient is made at the head but belongs to unit 0).
  LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& tokens, const Array& labels,
                              Recompute recompute = Recompute::none, const GradsReady& ready = {}) const;
  // The units value_and_grad fetches, in the order it fetches them: 0, 1..L, L+1 (and 0 for tied logits),
  // then L+1 (and 0), L..1, 0. A ZeRO-3 step prefetches by it.
  std::vector<int> fetch_order() const;
  // The same without recomputation: the form TrainStep calls (trainable_model.hpp).
  LossAndGrads value_and_grad(const LayerFetch& fetch, const Array& tokens, const Array& labels,
                              const GradsReady& ready) const;
  LossAndGrads value_and_grad(const Tree& params, const Array& tokens, const Array& labels,
                              Recompute recompute = Recompute::none) const;

 private:
  TransformerConfig config_;
};

}  // namespace spmdsim::models
