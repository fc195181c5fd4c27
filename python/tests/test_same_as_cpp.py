# The MLP of the C++ API's `spmdsim train` (784-256-128-10, tanh, softmax cross-entropy, SGD), written in plain
# JAX and run by sim.run on the same platform: where the two run the same computation (the gradients'
# all-reduce: one psum of the six gradient arrays; the batch's and state's host transfers) their reported times
# agree within 1%. Their compute differs: the front end fuses the jaxpr's elementwise ops and reductions as XLA
# does (docs/python.md, "Fusion"), where the C++ model runs its bias adds and activations op by op.
import jax_mlp
import pytest
from spmdsim_command import train_row

import spmdsim

devices, batch = 8, 256


def front_end_times():
    sim = spmdsim.Simulation(preset="a100", devices=devices)
    sim.run(jax_mlp.data_parallel_step(), *jax_mlp.parameters_and_batch(devices, batch))
    (call,) = [c for c in sim.report()["calls"] if c["name"] == "step"]
    return [d["times"] for d in call["devices"]]


def cpp_row():
    return train_row("--devices", str(devices), "--batch", str(batch), "--steps", "1", "--preset", "a100",
                     "--optimizer", "sgd")


def test_the_same_collective_and_transfers_take_the_same_time():
    times, row = front_end_times(), cpp_row()
    mean = lambda key: sum(t[key] for t in times) / len(times) * 1e6  # noqa: E731
    assert mean("communication_total") == pytest.approx(row["communication_us"], rel=0.01)
    assert mean("transfer") == pytest.approx(row["transfer_us"], rel=0.01)
