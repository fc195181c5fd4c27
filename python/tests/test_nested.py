# Nested pmap through the front end, against JAX on 8 CPU host devices: a pmap of a pmap (jax.pmap's
# docstring), collectives over a tuple of axis names, a pmap called in the function's body with work around
# it, and what the front end refuses before the simulation starts.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same
from jax import lax

import spmdsim

sim = spmdsim.Simulation(preset="a100", devices=8)
x = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3) / 5.0


def both(fn, *args):
    assert_same(sim.run(fn, *args), fn(*args), rtol=1e-6, atol=1e-5)


def test_pmap_of_pmap_normalizes_as_the_docstring_does():
    normalize = jax.pmap(jax.pmap(lambda v: (v / lax.psum(v, "rows"), v / lax.psum(v, "cols"),
                                             v / lax.psum(v, ("rows", "cols"))), axis_name="cols"),
                         axis_name="rows")
    both(normalize, np.arange(1, 9, dtype=np.float32).reshape(4, 2))


def test_collectives_over_a_tuple_of_names():
    inner = jax.pmap(lambda v: (lax.all_gather(v, ("j", "i")), lax.axis_index(("j", "i")),
                                lax.psum_scatter(jnp.tile(v, (8, 1)), ("i", "j")),
                                lax.pmax(v, ("i", "j"))), axis_name="j")
    both(jax.pmap(inner, axis_name="i"), x)


def test_a_pmap_called_in_the_body_with_work_around_it():
    inner = jax.pmap(lambda v: lax.psum(v, "j") + lax.axis_index("j") + 10 * lax.axis_index("i"), axis_name="j")
    both(jax.pmap(lambda v: jnp.tanh(inner(v * 2 + lax.psum(v, "i"))) + 1, axis_name="i"), x)


def test_two_pmaps_in_a_row_and_a_replicated_argument():
    double = jax.pmap(lambda v, w: v * w, axis_name="j", in_axes=(0, None))
    total = jax.pmap(lambda v: lax.psum(v, "j"), axis_name="j")
    w = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    both(jax.pmap(lambda v, w: double(v, w) + total(v), axis_name="i", in_axes=(0, None)), x, w)


def test_a_nested_step_takes_the_devices_of_both_axes():
    inner = jax.pmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j")
    sim.run(jax.pmap(lambda v: inner(v) * 2, axis_name="i"), x)
    call = sim.report()["calls"][-2]  # the step, then the device_get that reads its result
    assert len(call["devices"]) == 8


def test_abstract_nested_run_returns_shapes():
    inner = jax.pmap(lambda v: lax.psum(v, "j") @ jnp.ones((3, 5), v.dtype), axis_name="j")
    out = sim.run(jax.pmap(lambda v: inner(v) + 1, axis_name="i"), jax.ShapeDtypeStruct((2, 4, 3), jnp.float32))
    assert out == jax.ShapeDtypeStruct((2, 4, 5), jnp.float32)


def test_pmaps_of_one_depth_over_different_axes_are_refused_before_running():
    first = jax.pmap(lambda v: v * 2, axis_name="j")
    second = jax.pmap(lambda v: v + 1, axis_name="k")
    fn = jax.pmap(lambda v: first(v).sum() + second(v[:2]).sum(), axis_name="i")
    before = sim.now
    with pytest.raises(spmdsim.UnsupportedPrimitiveError, match="spmdsim runs the pmaps of one depth of nesting "
                                                                 "over one axis"):
        sim.run(fn, x)
    assert sim.now == before


def test_an_inner_pmap_with_devices_is_refused_as_jax_refuses_it():
    fn = jax.pmap(jax.pmap(lambda v: v, axis_name="j", devices=jax.devices()[:4]), axis_name="i")
    with pytest.raises(ValueError, match="Nested pmap with explicit devices argument."):
        sim.run(fn, x)
    with pytest.raises(ValueError, match="Nested pmap with explicit devices argument."):
        fn(x)


def test_a_name_bound_only_inside_the_inner_pmap_is_unbound_outside_it():
    inner = jax.pmap(lambda v: v, axis_name="j")
    with pytest.raises(NameError, match="unbound axis name: j"):
        sim.run(jax.pmap(lambda v: lax.psum(v, "j") + inner(v), axis_name="i"), x)
