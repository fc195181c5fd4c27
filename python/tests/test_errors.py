# What spmdsim cannot run is an error before the run, naming the primitive and where it is.
import jax
import jax.numpy as jnp
import pytest

import spmdsim


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(devices=2)


def test_unsupported_primitive_names_it_and_its_line(sim):
    def f(x):
        return jnp.linalg.cholesky(x)

    with pytest.raises(spmdsim.UnsupportedPrimitiveError,
                       match=r"'cholesky' at .*test_errors.py:\d+:\d+ \(.*f\)"):
        sim.run(jax.pmap(f), jnp.ones((2, 3, 3)))


def test_unsupported_primitive_inside_a_loop_body_is_found_before_the_run(sim):
    def f(x):
        return jax.lax.scan(lambda c, row: (c, jnp.linalg.cholesky(row)), 0.0, x)[1]

    with pytest.raises(spmdsim.UnsupportedPrimitiveError, match=r"'cholesky' at .*test_errors.py:\d+:\d+"):
        sim.run(jax.pmap(f), jnp.ones((2, 4, 3, 3)))
    assert sim.now == 0


def test_a_function_not_pmapped_is_refused(sim):
    with pytest.raises(TypeError, match="jax.pmap"):
        sim.run(lambda x: x + 1, jnp.ones((2, 3)))


def test_bad_platform_choice_is_a_value_error():
    with pytest.raises(ValueError, match="unknown --preset 'nope'"):
        spmdsim.Simulation(preset="nope")


def test_unsupported_gather_mode_names_it_and_its_line(sim):
    def f(x, i):
        return x.at[i].get(mode="one_hot")

    with pytest.raises(spmdsim.UnsupportedPrimitiveError,
                       match=r"^gather with mode ONE_HOT at .*test_errors.py:\d+:\d+ \(.*f\): spmdsim runs the modes "
                             r"CLIP, FILL_OR_DROP, PROMISE_IN_BOUNDS$"):
        sim.run(jax.pmap(f), jnp.ones((2, 5, 3)), jnp.zeros((2, 2), jnp.int32))
    assert sim.now == 0


def test_uint32_values_name_the_primitive_and_its_line(sim):
    def count(step):
        return step + 1  # nnx.Optimizer's step counter is a uint32

    with pytest.raises(spmdsim.UnsupportedPrimitiveError,
                       match=r"^spmdsim cannot run the JAX primitive 'add' on uint32 values at .*test_errors.py:\d+:\d+ "
                             r"\(.*count\) \(in the pmapped function\): spmdsim's arrays have no uint32 dtype$"):
        sim.run(jax.pmap(count), jnp.zeros(2, jnp.uint32))
    assert sim.now == 0
