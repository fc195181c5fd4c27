# pmap's donate_argnums in the front end (docs/python.md, "The API"): the donated leaves (the trace's
# donated_invars) are held on each device by the per-device program alone, so each is released after its last
# use, as XLA reuses a donated buffer: an update of four parameter arrays holds the old and the new of one
# array at a time, not of all four. One Simulation per process: the calls are one timeline.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same

import spmdsim

ARRAY = 1024 * 1024 * 4  # bytes of one float32 [1024, 1024] parameter


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(preset="h100", topology="switch", devices=2)


def update(params, x):
    return jax.tree_util.tree_map(lambda p: p - jnp.sum(x), params)


def peak_of(sim, function, donate_argnums):
    params = {k: jax.ShapeDtypeStruct((1024, 1024), jnp.float32) for k in "abcd"}
    pmapped = jax.pmap(function, in_axes=(None, 0), donate_argnums=donate_argnums)
    sim.run(pmapped, params, jax.ShapeDtypeStruct((2, 8), jnp.float32))
    (call,) = [c for c in sim.report()["calls"] if c["name"] == function.__name__]
    return call["devices"][0]["memory"]["peak"]


def test_a_donated_tree_is_released_leaf_by_leaf(sim):
    def kept(params, x):
        return update(params, x)

    def donated(params, x):
        return update(params, x)

    small = 8 * 4 + 4  # a device's shard of x and its sum
    assert peak_of(sim, kept, ()) == 8 * ARRAY + small  # the four old arrays and the four new ones
    assert peak_of(sim, donated, (0,)) == 5 * ARRAY + small  # the four new ones and the old one updated


def test_donated_values_are_jaxs(sim):
    params = {k: np.full((3, 2), i, np.float32) for i, k in enumerate("ab")}
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    expected = jax.pmap(update, in_axes=(None, 0))(params, x)
    got = sim.run(jax.pmap(update, in_axes=(None, 0), donate_argnums=(0,)), params, x)
    assert_same(got, expected)
