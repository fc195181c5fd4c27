# Gather, scatter and sort as JAX emits them, and erf_inv, against JAX on 8 CPU host devices: array indexing
# (x[idx], x[:, idx], negative and out-of-range indices, take_along_axis, jnp.take with a fill), x.at[...]
# updates, an embedding lookup emb[tokens] and its gradient, jnp.sort / argsort / lexsort; their cost is what
# XLA's kernels move (a lookup reads its rows, not the table), and abstract runs size them.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same
from jax import lax

import spmdsim

n = 8
sim = spmdsim.Simulation(preset="a100", devices=n)
rng = np.random.default_rng(0)
x = rng.standard_normal((n, 6, 5)).astype(np.float32)
idx = rng.integers(-6, 6, (n, 4)).astype(np.int32)


def both(f, *args, rtol=1e-6, **pmap_kwargs):
    fn = jax.pmap(f, axis_name="i", **pmap_kwargs)
    assert_same(sim.run(fn, *args), fn(*args), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("index", [
    lambda v, i: v[i],
    lambda v, i: v[i * 2],  # out of range either side: clamped, as XLA's gather clamps
    lambda v, i: v[:, i[:3] % 5],
    lambda v, i: v[i, i % 5],
    lambda v, i: v[1:, i[1:3]][:, ::-1],
    lambda v, i: jnp.take_along_axis(v[:4], jnp.abs(i[:, None]) % 5, axis=1),
    lambda v, i: jnp.take(v, i * 3, axis=0, mode="fill", fill_value=-1.0),
    lambda v, i: jnp.take(v, i * 3, axis=1, mode="clip"),
    lambda v, i: jnp.take(v, i * 3, axis=0),  # fill with NaN out of range
    lambda v, i: jnp.take(i, i * 3, mode="fill"),  # int32: the fill is int32's minimum
    # Windows wider than one element, clamped into the operand: a batched dynamic_slice.
    lambda v, i: jax.vmap(lambda row, j: lax.dynamic_slice(row, (j,), (3,)))(v, jnp.tile(i, 2)[:6]),
])
def test_gather(index):
    both(index, x, idx)


@pytest.mark.parametrize("update", [
    lambda v, i: v.at[i].set(7.0),
    lambda v, i: v.at[i].add(1.5),  # duplicate indices accumulate
    lambda v, i: v.at[:, i[:3] % 5].multiply(v[:, :3]),
    lambda v, i: v.at[i, 2].min(-0.5),
    lambda v, i: v.at[i * 3].max(0.25),  # out of range: dropped
    lambda v, i: v.at[i * 3].add(1.0, mode="clip"),
    lambda v, i: jnp.zeros(10).at[i + 6].add(v[:4, 0]),
    lambda v, i: jax.vmap(lambda row, j: lax.dynamic_update_slice(row, -row[:2], (j,)))(v, jnp.tile(i, 2)[:6]),
])
def test_scatter(update):
    both(update, x, idx)


def test_embedding_lookup_and_its_gradient_in_a_data_parallel_step():
    vocab, dim = 50, 8
    emb = rng.standard_normal((vocab, dim)).astype(np.float32)
    tokens = rng.integers(0, vocab, (n, 3, 7)).astype(np.int32)

    def step(table, toks):
        loss, grad = jax.value_and_grad(lambda t: jnp.mean(jnp.tanh(t[toks]) ** 2))(table)
        return lax.pmean(loss, "i"), lax.pmean(grad, "i")

    both(step, emb, tokens, in_axes=(None, 0), out_axes=None, rtol=1e-5)


def test_a_lookup_reads_its_rows_not_the_table():
    table = np.ones((n, 4096, 256), np.float32)  # 4 MiB per device
    rows = np.zeros((n, 2), np.int32)
    sim.run(jax.pmap(lambda t, r: (t[r], t * 2), axis_name="i"), table, rows)
    call = [c for c in sim.report()["calls"] if c["name"] != "device_get"][-1]
    duration = {s["name"]: s["end"] - s["start"] for s in call["devices"][0]["spans"]}
    # The multiply reads and writes the table; the gather, charged the table, would take more than half that.
    assert duration["gather"] < duration["multiply"] / 2


@pytest.mark.parametrize("sort", [
    lambda v, i: jnp.sort(v, axis=0),
    lambda v, i: jnp.sort(v),
    lambda v, i: jnp.argsort(v, axis=0),
    lambda v, i: jnp.argsort(i),  # ties keep their order
    lambda v, i: jnp.lexsort((v[0, :4], i % 2)),
    lambda v, i: lax.sort((i, v[0, :4]), num_keys=1),
    lambda v, i: jnp.sort(jnp.array([0.0, -0.0, jnp.nan, -jnp.inf, 1.0]) * v[0, 0]),
])
def test_sort(sort):
    both(sort, x, idx)


def test_erf_inv():
    values = np.linspace(-0.999, 0.999, n * 41, dtype=np.float32).reshape(n, 41)
    both(lambda v: jax.scipy.special.erfinv(v), values, rtol=2e-6)
    both(lambda v: lax.erf_inv(v * 1.001), values, rtol=2e-6)  # past +-1: NaN, +-1: +-inf


def test_abstract_gather_scatter_and_sort():
    emb = jax.ShapeDtypeStruct((32000, 512), jnp.bfloat16)
    tokens = jax.ShapeDtypeStruct((n, 4, 128), jnp.int32)

    def f(table, toks):
        grad = jax.grad(lambda t: jnp.sum(t[toks].astype(jnp.float32)))(table)
        return grad, jnp.argsort(toks, axis=-1)

    grad, order = sim.run(jax.pmap(f, axis_name="i", in_axes=(None, 0)), emb, tokens)
    assert grad == jax.ShapeDtypeStruct((n, 32000, 512), jnp.bfloat16)
    assert order == jax.ShapeDtypeStruct((n, 4, 128), jnp.int32)


def test_one_hot_compares_labels_with_an_iota_broadcast_on_size_1_dimensions():
    # jax.nn.one_hot binds eq on (n, 1) labels and a (1, k) iota, lax broadcasting their size-1 dimensions.
    labels = rng.integers(0, 5, (n, 7)).astype(np.int32)
    both(lambda l: (jax.nn.one_hot(l, 5), lax.lt(l[:, None], lax.broadcasted_iota(jnp.int32, (1, 5), 1))), labels)


def test_reshape_with_dimensions_transposes_first():
    # lax.reshape's `dimensions` (as a grouped convolution's gradient reshapes its kernel) reads the operand in
    # that order.
    both(lambda v: lax.reshape(v, (5, 6), dimensions=(1, 0)), x)
