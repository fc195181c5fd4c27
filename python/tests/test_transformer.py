# A data-parallel training loop of a small decoder-only transformer written in plain JAX: token and position
# embeddings looked up by index (gather; their gradients scatter-add), pre-norm blocks stacked with lax.scan
# over their stacked parameters (jax.grad through the scan), causal multi-head attention, a GELU MLP, the
# cross-entropy of the next token read with take_along_axis, gradients averaged with pmean and Adam. spmdsim's
# losses and parameters are JAX's, step after step, on one timeline; then the same step runs abstract.
import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_same
from jax import lax

import spmdsim

num_devices = 4
vocab, seq, dim, heads, layers, per_device = 37, 12, 16, 2, 2, 3


def init(key):
    keys = jax.random.split(key, 6)

    def normal(k, shape, scale=0.1):
        return jax.random.normal(k, shape, jnp.float32) * scale

    return {
        "tokens": normal(keys[0], (vocab, dim)),
        "positions": normal(keys[1], (seq, dim)),
        "blocks": {  # one leading axis of `layers`: lax.scan runs the blocks
            "norm1": jnp.ones((layers, dim)), "norm2": jnp.ones((layers, dim)),
            "qkv": normal(keys[2], (layers, dim, 3 * dim)), "out": normal(keys[3], (layers, dim, dim)),
            "up": normal(keys[4], (layers, dim, 4 * dim)), "down": normal(keys[5], (layers, 4 * dim, dim)),
        },
        "norm": jnp.ones((dim,)),
    }


def layer_norm(x, scale):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * scale


def attention(x, qkv, out):
    b, s, _ = x.shape
    q, k, v = jnp.split(x @ qkv, 3, axis=-1)
    q, k, v = (t.reshape(b, s, heads, dim // heads).transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dim // heads)
    causal = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(causal, scores, -1e9)
    mixed = jax.nn.softmax(scores, axis=-1) @ v
    return mixed.transpose(0, 2, 1, 3).reshape(b, s, dim) @ out


def block(x, p):
    x = x + attention(layer_norm(x, p["norm1"]), p["qkv"], p["out"])
    x = x + jax.nn.gelu(layer_norm(x, p["norm2"]) @ p["up"]) @ p["down"]
    return x, None


def loss_fn(params, tokens):
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    x = params["tokens"][inputs] + params["positions"][: inputs.shape[1]]
    x, _ = lax.scan(block, x, params["blocks"])
    logits = layer_norm(x, params["norm"]) @ params["tokens"].T
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], axis=-1))


def adam(params, grads, state, lr=1e-2, b1=0.9, b2=0.999):
    m, v, t = state
    t = t + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    update = lambda p, m, v: p - lr * (m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + 1e-8)  # noqa: E731
    return jax.tree_util.tree_map(update, params, m, v), (m, v, t)


def train_step(params, state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    grads = lax.pmean(grads, axis_name="batch")
    params, state = adam(params, grads, state)
    return params, state, lax.pmean(loss, axis_name="batch")


step = jax.pmap(train_step, axis_name="batch", in_axes=(None, None, 0), out_axes=(None, None, None))


def test_losses_and_parameters_equal_jax():
    sim = spmdsim.Simulation(preset="a100", devices=num_devices)
    params = init(jax.random.PRNGKey(0))
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (zeros, zeros, jnp.zeros((), jnp.int32))
    tokens = np.random.default_rng(2).integers(0, vocab, (num_devices, per_device, seq + 1)).astype(np.int32)
    jax_run = sim_run = (params, state)
    losses = []
    for _ in range(4):
        *jax_run, loss_jax = step(*jax_run, tokens)
        *sim_run, loss_sim = sim.run(step, *sim_run, tokens)
        assert_same(loss_sim, loss_jax, rtol=1e-5, atol=1e-6)
        assert_same(sim_run[0], jax_run[0], rtol=1e-4, atol=1e-5)
        losses.append(float(loss_sim))
    assert losses[-1] < losses[0]
    assert [c["name"] for c in sim.report()["calls"]].count("train_step") == 4

    # The same step abstract, at a larger batch: shapes out, costs in the report.
    shapes = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.result_type(a)),
                                    (params, state))
    big_batch = jax.ShapeDtypeStruct((num_devices, 64, seq + 1), jnp.int32)
    new_params, _, loss = sim.run(step, *shapes, big_batch)
    assert loss == jax.ShapeDtypeStruct((), jnp.float32)
    assert new_params["blocks"]["qkv"] == jax.ShapeDtypeStruct((layers, dim, 3 * dim), jnp.float32)
