# A data-parallel MLP training loop written in plain JAX (jax.value_and_grad inside pmap, gradients averaged
# with pmean, SGD): spmdsim's losses and parameters are JAX's, step after step, on one timeline.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same

import spmdsim

num_devices = 4


def init(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append({"w": jax.random.normal(k, (n_in, n_out), jnp.float32) / np.sqrt(n_in),
                       "b": jnp.zeros((n_out,), jnp.float32)})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = jax.lax.pmean(grads, axis_name="batch")
    params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return params, jax.lax.pmean(loss, axis_name="batch")


step = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, 0))


def dataset(per_device=16, features=12, classes=5):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((num_devices, per_device, features)).astype(np.float32)
    labels = rng.integers(0, classes, (num_devices, per_device))
    return x, np.eye(classes, dtype=np.float32)[labels]


def test_losses_equal_jax():
    sim = spmdsim.Simulation(preset="a100", devices=num_devices)
    params_jax = params_sim = init(jax.random.PRNGKey(0), [12, 32, 32, 5])
    losses = []
    x, y = dataset()
    for _ in range(5):
        params_jax, loss_jax = step(params_jax, x, y)
        params_sim, loss_sim = sim.run(step, params_sim, x, y)
        assert_same(loss_sim, loss_jax, rtol=1e-5, atol=1e-6)
        assert_same(params_sim, params_jax, rtol=1e-5, atol=1e-6)
        losses.append(float(loss_sim[0]))
    assert losses[-1] < losses[0]
    report = sim.report()
    names = [c["name"] for c in report["calls"]]
    assert names.count("train_step") == 5
    assert sim.now > 0
