# The MLP of the C++ API's `spmdsim train` (784-256-128-10, tanh, softmax cross-entropy, SGD), written in plain
# JAX and run by sim.run on the same platform: where the two run the same computation (the gradients'
# all-reduce: one psum of the six gradient arrays; the batch's and state's host transfers) their reported times
# agree within 1%. Their compute differs: the front end runs each equation of JAX's jaxpr as its own kernel,
# where the C++ model runs fused kernels (docs/python.md, "Performance").
import json
import subprocess
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmdsim

devices, batch = 8, 256
sizes = [784, 256, 128, 10]
command = Path(spmdsim.__file__).resolve().parents[2] / "experiments" / "spmdsim"


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b) * y, axis=-1))


def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = jax.lax.pmean(grads, "batch")
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), jax.lax.pmean(loss, "batch")


def front_end_times():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((a, b), np.float32) * 0.05, np.zeros(b, np.float32))
              for a, b in zip(sizes, sizes[1:])]
    x = rng.standard_normal((devices, batch // devices, sizes[0]), np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], (devices, batch // devices))]
    sim = spmdsim.Simulation(preset="a100", devices=devices)
    sim.run(jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None)), params, x, y)
    (call,) = [c for c in sim.report()["calls"] if c["name"] == "step"]
    return [d["times"] for d in call["devices"]]


def cpp_row():
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "train.json"
        subprocess.run([str(command), "train", "--devices", str(devices), "--batch", str(batch), "--steps", "1",
                        "--preset", "a100", "--optimizer", "sgd", "--json", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        (row,) = json.loads(out.read_text())["rows"]
    return row


def test_the_same_collective_and_transfers_take_the_same_time():
    times, row = front_end_times(), cpp_row()
    mean = lambda key: sum(t[key] for t in times) / len(times) * 1e6  # noqa: E731
    assert mean("communication_total") == pytest.approx(row["communication_us"], rel=0.01)
    assert mean("transfer") == pytest.approx(row["transfer_us"], rel=0.01)
