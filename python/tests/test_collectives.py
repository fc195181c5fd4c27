# Every collective rule of the front end against JAX on 8 CPU host devices: psum_scatter (reduce_scatter),
# all_gather (tiled too), ppermute, all_to_all, pmax, pmin, axis_index, psum with axis_index_groups, and a
# ZeRO-style step that scatters gradients and gathers parameters.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same

import spmdsim

n = 8
sim = spmdsim.Simulation(preset="a100", devices=n)
x = np.arange(n * 16 * 4, dtype=np.float32).reshape(n, 16, 4) / 7.0


def both(f, *args, **pmap_kwargs):
    fn = jax.pmap(f, axis_name="i", **pmap_kwargs)
    assert_same(sim.run(fn, *args), fn(*args), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter(tiled):
    both(lambda v: jax.lax.psum_scatter(v[:8] if not tiled else v, "i", scatter_dimension=0, tiled=tiled), x)


@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather(tiled):
    both(lambda v: jax.lax.all_gather(v, "i", axis=1, tiled=tiled), x)


def test_ppermute_ring():
    both(lambda v: jax.lax.ppermute(v, "i", perm=[(j, (j + 1) % n) for j in range(n)]), x)


def test_all_to_all():
    both(lambda v: jax.lax.all_to_all(v, "i", split_axis=0, concat_axis=1), x[:, :8, :])


def test_pmax_pmin_axis_index():
    both(lambda v: (jax.lax.pmax(v, "i"), jax.lax.pmin(v, "i"), jax.lax.axis_index("i") * 2), x)


def test_psum_with_axis_index_groups():
    both(lambda v: jax.lax.psum(v, "i", axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]), x)


def test_zero_style_step():
    def step(w_shard, data):
        w = jax.lax.all_gather(w_shard, "i", tiled=True)
        g = jax.grad(lambda w: jnp.sum(jnp.tanh(data @ w) ** 2))(w)
        g_shard = jax.lax.psum_scatter(g, "i", tiled=True)
        return w_shard - 0.01 * g_shard

    w = np.linspace(-1, 1, n * 4 * 3, dtype=np.float32).reshape(n, 4, 3)  # 32 x 3 split in 8 shards of 4 rows
    data = np.linspace(0, 1, n * 5 * 32, dtype=np.float32).reshape(n, 5, 32)
    both(step, w, data)
