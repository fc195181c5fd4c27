"""A GPT-style transformer written in plain JAX, as users write one: token and position embeddings, pre-norm
blocks (causal multi-head attention, a GELU MLP), a final layer norm, an output head (untied, or the token
embedding's transpose when tied, as GPT-2 and `spmdsim train --model custom` have it) and softmax
cross-entropy. The front end's tests and its benchmark run its data-parallel step through spmdsim; at the 7B
shape (32 layers, h 4096, 32 heads, s 2048, vocabulary 32000: spmdsim's gpt_7b) in abstract mode.
"""
from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    tied_embeddings: bool = False


GPT_7B = Shape(layers=32, hidden=4096, heads=32, seq=2048, vocab=32000)


def param_shapes(shape, dtype=jnp.bfloat16):
    """The parameters as jax.ShapeDtypeStruct leaves (abstract mode)."""
    h, v, s = shape.hidden, shape.vocab, shape.seq

    def leaf(*dims):
        return jax.ShapeDtypeStruct(dims, dtype)

    block = {"ln_1": {"g": leaf(h), "b": leaf(h)}, "qkv": {"w": leaf(h, 3 * h), "b": leaf(3 * h)},
             "proj": {"w": leaf(h, h), "b": leaf(h)}, "ln_2": {"g": leaf(h), "b": leaf(h)},
             "fc": {"w": leaf(h, 4 * h), "b": leaf(4 * h)}, "out": {"w": leaf(4 * h, h), "b": leaf(h)}}
    params = {"wte": leaf(v, h), "wpe": leaf(s, h), "blocks": [block] * shape.layers,
              "ln_f": {"g": leaf(h), "b": leaf(h)}}
    return params if shape.tied_embeddings else {**params, "head": leaf(h, v)}


def init(key, shape, dtype=jnp.float32):
    """Random parameters of `shape` (real mode)."""
    shapes = param_shapes(shape, dtype)
    leaves, tree = jax.tree_util.tree_flatten(shapes)
    keys = jax.random.split(key, len(leaves))
    return jax.tree_util.tree_unflatten(
        tree, [0.02 * jax.random.normal(k, leaf.shape, dtype) for k, leaf in zip(keys, leaves)])


def layer_norm(x, p):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]


def attention(x, p, heads):
    b, s, h = x.shape
    qkv = x @ p["qkv"]["w"] + p["qkv"]["b"]
    q, k, v = (t.reshape(b, s, heads, h // heads).transpose(0, 2, 1, 3) for t in jnp.split(qkv, 3, axis=-1))
    scores = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(jnp.asarray(h // heads, x.dtype))
    causal = jnp.tril(jnp.ones((s, s), bool))
    probs = jax.nn.softmax(jnp.where(causal, scores, jnp.asarray(-1e4, x.dtype)), axis=-1)
    out = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    return out @ p["proj"]["w"] + p["proj"]["b"]


def loss_fn(params, tokens, labels, shape):
    x = params["wte"][tokens] + params["wpe"][: tokens.shape[1]]
    for block in params["blocks"]:
        x = x + attention(layer_norm(x, block["ln_1"]), block, shape.heads)
        h = jax.nn.gelu(layer_norm(x, block["ln_2"]) @ block["fc"]["w"] + block["fc"]["b"])
        x = x + h @ block["out"]["w"] + block["out"]["b"]
    head = params["wte"].T if shape.tied_embeddings else params["head"]
    logits = layer_norm(x, params["ln_f"]) @ head
    log_probs = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[..., None], axis=-1))


def data_parallel_step(shape, learning_rate=1e-4):
    """A pmapped SGD step: gradients averaged over the 'batch' axis; parameters replicated (in_axes None)."""

    def step(params, tokens, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, labels, shape)
        grads = jax.lax.pmean(grads, axis_name="batch")
        params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return params, jax.lax.pmean(loss, axis_name="batch")

    return jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
