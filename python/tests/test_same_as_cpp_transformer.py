# A small transformer written in plain JAX (jax_gpt.py, tied embeddings) against the same shape in the C++
# API (`spmdsim train --model custom`), data-parallel on 8 A100s from shapes: the gradients' all-reduce is
# the same computation on both sides (one bucket of every gradient) and takes the same time, within 1%.
# Their compute differs (the front end fuses as XLA does; docs/python.md), and so do their host transfers:
# the command's step finds its parameters on the devices, the front end's single call sends them.
import jax
import jax.numpy as jnp
import jax_gpt
import pytest
from spmdsim_command import train_row

import spmdsim

devices = 8
shape = jax_gpt.Shape(layers=2, hidden=64, heads=4, seq=32, vocab=128, tied_embeddings=True)


def front_end_communication_us():
    sim = spmdsim.Simulation(preset="a100", devices=devices)
    tokens = jax.ShapeDtypeStruct((devices, 1, shape.seq), jnp.int32)
    sim.run(jax_gpt.data_parallel_step(shape), jax_gpt.param_shapes(shape, jnp.float32), tokens, tokens)
    (call,) = [c for c in sim.report()["calls"] if c["name"] == "step"]
    return sum(d["times"]["communication_total"] for d in call["devices"]) / devices * 1e6


def cpp_communication_us():
    return train_row("--model", "custom", "--layers", str(shape.layers), "--hidden", str(shape.hidden),
                     "--heads", str(shape.heads), "--seq-len", str(shape.seq), "--vocab", str(shape.vocab),
                     "--devices", str(devices), "--batch", str(devices), "--steps", "1", "--preset", "a100",
                     "--optimizer", "sgd", "--abstract")["communication_us"]


def test_the_gradients_all_reduce_takes_the_same_time():
    cpp = cpp_communication_us()
    assert cpp > 0
    assert front_end_communication_us() == pytest.approx(cpp, rel=0.01)
