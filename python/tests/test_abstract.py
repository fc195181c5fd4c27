# Abstract mode: jax.ShapeDtypeStruct leaves trace and simulate without values, for any device count; the
# outputs are ShapeDtypeStructs of JAX's shapes, and the report has the costs and memory of the real run.
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmdsim

devices = 256


@pytest.fixture(scope="module")
def sim():  # one per process: SimGrid has one engine per process; the tests' calls are one timeline
    return spmdsim.Simulation(preset="h100", topology="switch", devices=devices)


def train_step(params, x):
    def loss_fn(p):
        h = jnp.tanh(x @ p["w1"])
        return jnp.mean((h @ p["w2"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "dp")
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), jax.lax.pmean(loss, "dp")


def test_abstract_step_on_many_devices(sim):
    params = {"w1": jax.ShapeDtypeStruct((1024, 4096), jnp.bfloat16),
              "w2": jax.ShapeDtypeStruct((4096, 1024), jnp.bfloat16)}
    x = jax.ShapeDtypeStruct((devices, 8, 1024), jnp.bfloat16)
    step = jax.pmap(train_step, axis_name="dp", in_axes=(None, 0), out_axes=(None, 0))
    new_params, loss = sim.run(step, params, x)
    assert new_params["w1"] == jax.ShapeDtypeStruct((1024, 4096), jnp.bfloat16)
    assert loss == jax.ShapeDtypeStruct((devices,), jnp.bfloat16)
    report = sim.report()
    (call,) = [c for c in report["calls"] if c["name"] == "train_step"]
    assert call["end"] > call["start"]
    assert len(call["devices"]) == devices
    # Every device computed (two matmuls forward, their gradients) and all-reduced the gradients.
    for device in call["devices"]:
        assert device["times"]["compute"] > 0
        assert device["times"]["communication"]["psum"] > 0
    # Each device holds the replicated parameters (16 MiB in bfloat16) at its peak, and their gradients.
    params_bytes = 2 * 1024 * 4096 * 2
    assert min(d["memory"]["peak"] for d in report["devices"]) >= 2 * params_bytes


def test_a_view_keeps_its_buffer_alive(sim):
    # v is a bitcast of a (XLA aliases the two) made before b and read by a product after it: a's buffer is
    # live until then, so the peak holds x, a and b together, though nothing reads a itself after the reshape.
    n = 2048

    def f(x):
        a = x @ x
        v = a.reshape(n // 2, 2 * n)
        b = x @ x
        return (v @ jnp.ones((2 * n, 1), x.dtype)).sum() + b.sum()

    sim.run(jax.pmap(f, axis_name="dp"), jax.ShapeDtypeStruct((devices, n, n), jnp.float32))
    (call,) = [c for c in sim.report()["calls"] if c["name"] == "f"]
    matrix = n * n * 4
    for device in call["devices"]:
        assert 3 * matrix <= device["memory"]["peak"] < 3 * matrix + 2**20
