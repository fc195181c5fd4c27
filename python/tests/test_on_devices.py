# Results stay on the devices between sim.run calls, as jax.Arrays do (docs/python.md, "The API"): a training
# loop sends its replicated parameters once, each later step only its batch; the returned numpy arrays are
# read-only; sim.device_get is the read back, charged; a donated result cannot be passed again. One Simulation
# per process: the calls are one timeline.
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmdsim

DEVICES = 2


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(preset="h100", topology="switch", devices=DEVICES)


def train_step(w, x):
    g = jax.lax.pmean(jnp.sum(x) * w, "batch")
    return w - 0.1 * g, jax.lax.pmean(jnp.sum(x), "batch")


step = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0), out_axes=(None, None))


def transfers(sim, name):
    """Per call named `name`, device 0's host transfer time."""
    calls = [c for c in sim.report()["calls"] if c["name"] == name]
    return [c["devices"][0]["times"]["transfer"] for c in calls]


def test_a_loop_sends_its_parameters_once(sim):
    w = np.ones((512, 1024), np.float32)  # 2 MiB, replicated
    x = np.ones((DEVICES, 4), np.float32)
    expected_w = w
    for _ in range(3):
        w, loss = sim.run(step, w, x)
        expected_w, _ = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0), out_axes=(None, None))(
            expected_w, x)
    np.testing.assert_allclose(w, np.asarray(expected_w), rtol=1e-6)
    first, second, third = transfers(sim, "train_step")
    assert first > 10 * second  # the parameters and the batch, then the batch alone
    assert second == pytest.approx(third, rel=1e-9)


def test_results_are_read_only(sim):
    w, _ = sim.run(step, np.ones((4, 4), np.float32), np.ones((DEVICES, 4), np.float32))
    with pytest.raises(ValueError, match="read-only"):
        w[0, 0] = 1.0


def test_device_get_reads_back_and_is_charged(sim):
    w, _ = sim.run(step, np.ones((512, 1024), np.float32), np.ones((DEVICES, 4), np.float32))
    read = sim.device_get({"w": w})
    np.testing.assert_array_equal(read["w"], w)
    assert read["w"].flags.writeable
    (last_read,) = transfers(sim, "device_get")[-1:]
    assert last_read > 0


def test_a_donated_result_cannot_be_passed_again(sim):
    donating = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0), out_axes=(None, None),
                        donate_argnums=(0,))
    x = np.ones((DEVICES, 4), np.float32)
    w, _ = sim.run(step, np.ones((4, 4), np.float32), x)
    sim.run(donating, w, x)
    with pytest.raises(ValueError, match="delete"):
        sim.run(step, w, x)
