# The Day 015 pmap tutorial (../shared/seeds/001_*.txt). The page describes its main.py part by part without
# printing it; each part is written here as described, with the page's names and calls: a basic pmap over the
# leading axis, in_axes=(None, 0) replicating parameters and sharding data, a data-parallel MLP trained with
# Optax, its parameters and optimizer state replicated with jnp.array([x] * num_devices), its data reshaped to
# (num_devices, ...), pmap with axis_name='devices' and lax.pmean(grads, axis_name='devices'), and replica 0's
# parameters taken back to the host. Run by spmdsim and by JAX on all 8 devices: the same values, shapes, dtypes.
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from conftest import assert_same
from jax import lax, pmap

import spmdsim

num_devices = jax.device_count()
sim = spmdsim.Simulation(preset="a100", devices=num_devices)


def test_part1_basic_pmap():
    x = jnp.arange(num_devices * 4, dtype=jnp.float32).reshape(num_devices, 4)
    parallel_square = pmap(lambda x: x ** 2)
    assert_same(sim.run(parallel_square, x), parallel_square(x))


def test_part2_in_axes_replicated_params_sharded_data():
    def predict(params, x):
        return jnp.dot(x, params['w']) + params['b']

    rng = np.random.default_rng(1)
    params = {'w': rng.standard_normal((3, 2), np.float32), 'b': np.zeros(2, np.float32)}
    x = rng.standard_normal((num_devices, 5, 3), np.float32)
    parallel_predict = pmap(predict, in_axes=(None, 0))
    assert_same(sim.run(parallel_predict, params, x), parallel_predict(params, x), rtol=1e-5)


# Part 3: a simple MLP, its loss and Optax.
def init_mlp(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, w_key = jax.random.split(key)
        params.append({'w': jax.random.normal(w_key, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
                       'b': jnp.zeros(n_out)})
    return params


def mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer['w'] + layer['b'])
    return x @ params[-1]['w'] + params[-1]['b']


def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


optimizer = optax.adam(learning_rate=1e-2)


# The page's `@pmap(axis_name='devices')`: pmap takes its function first, so the decorator is written with partial.
@partial(pmap, axis_name='devices')
def pmapped_train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = lax.pmean(grads, axis_name='devices')
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, lax.pmean(loss, axis_name='devices')


def test_part3_data_parallel_training_and_part4_gathering():
    params = init_mlp(jax.random.PRNGKey(0), [4, 32, 32, 1])
    opt_state = optimizer.init(params)
    replicated_params = jax.tree_util.tree_map(lambda x: jnp.array([x] * num_devices), params)
    replicated_opt_state = jax.tree_util.tree_map(lambda x: jnp.array([x] * num_devices), opt_state)
    X_train = jax.random.normal(jax.random.PRNGKey(1), (num_devices * 16, 4))
    y_train = jnp.sin(X_train.sum(axis=1, keepdims=True))
    X_sharded = X_train.reshape((num_devices, -1) + X_train.shape[1:])
    y_sharded = y_train.reshape((num_devices, -1) + y_train.shape[1:])

    sim_state = jax_state = (replicated_params, replicated_opt_state)
    for _ in range(3):
        *sim_state, sim_loss = sim.run(pmapped_train_step, *sim_state, X_sharded, y_sharded)
        *jax_state, jax_loss = pmapped_train_step(*jax_state, X_sharded, y_sharded)
        assert_same(sim_loss, jax_loss, rtol=1e-5)
        assert_same(sim_state, jax_state, rtol=1e-4, atol=1e-5)

    # Part 4: replica 0's parameters, back on the host for inference.
    sim_params = jax.tree_util.tree_map(lambda x: x[0], sim_state[0])
    jax_params = jax.tree_util.tree_map(lambda x: x[0], jax_state[0])
    assert_same(mlp(sim_params, X_train), mlp(jax_params, X_train), rtol=1e-4, atol=1e-5)
