"""The MLP of the C++ API's `spmdsim train` (784-256-128-10, tanh, softmax cross-entropy, SGD at 0.01) written
in plain JAX: its data-parallel step, parameters and data. test_same_as_cpp.py and the front end's benchmark
run it through sim.run beside the command.
"""
import jax
import jax.numpy as jnp
import numpy as np

SIZES = [784, 256, 128, 10]


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b) * y, axis=-1))


def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = jax.lax.pmean(grads, "batch")
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), jax.lax.pmean(loss, "batch")


def data_parallel_step():
    """The step pmapped over 'batch': parameters replicated, samples and labels split."""
    return jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))


def parameters_and_batch(devices, batch, seed=0):
    """Random parameters, and a batch of `batch` samples with one-hot labels split over `devices`."""
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((a, b), np.float32) * 0.05, np.zeros(b, np.float32))
              for a, b in zip(SIZES, SIZES[1:])]
    x = rng.standard_normal((devices, batch // devices, SIZES[0]), np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], (devices, batch // devices))]
    return params, x, y
