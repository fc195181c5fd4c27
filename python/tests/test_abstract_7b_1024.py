# The 7B-parameter transformer step written in plain JAX (jax_gpt.py), data-parallel on 1,024 simulated H100s
# from jax.ShapeDtypeStruct leaves, its ring phases aggregated (Simulation(aggregate=True), as `spmdsim train
# --aggregate` runs them): the step at the scale the issue asks of the front end (about 8 s here, its program
# replayed on every device; docs/python.md, "Performance"). The report is read without its spans (millions at
# this size).
import jax
import jax.numpy as jnp
import jax_gpt

import spmdsim

devices = 1024
H100_BF16_PEAK = 989e12  # FLOP/s, dense (the h100 preset's)
SWITCH_LINK = 439.027e9  # bytes/s each way of a device's link to the switch (the h100 preset's, --topology switch)


def test_gpt_7b_step_abstract_on_1024_devices():
    shape = jax_gpt.GPT_7B
    sim = spmdsim.Simulation(preset="h100", topology="switch", devices=devices, aggregate=True)
    tokens = jax.ShapeDtypeStruct((devices, 1, shape.seq), jnp.int32)
    params = jax_gpt.param_shapes(shape)
    new_params, loss = sim.run(jax_gpt.data_parallel_step(shape), params, tokens, tokens)
    assert all(a == b for a, b in zip(jax.tree_util.tree_leaves(new_params), jax.tree_util.tree_leaves(params)))
    assert loss == jax.ShapeDtypeStruct((), jnp.float32)
    report = sim.report(details=False)
    (call,) = [c for c in report["calls"] if c["name"] == "step"]
    assert len(call["devices"]) == devices
    assert all(d["spans"] == [] for d in call["devices"])
    parameters = sum(leaf.size for leaf in jax.tree_util.tree_leaves(params))
    # Every device ran the forward and backward (about 6 FLOPs per parameter and token, at most the bf16 peak)
    # and the ring all-reduce of the bf16 gradients: 2 (p-1)/p of them each way over its link, at least.
    flops = 6 * parameters * shape.seq
    ring = 2 * (devices - 1) / devices * 2 * parameters / SWITCH_LINK
    for device in (call["devices"][0], call["devices"][-1]):
        assert device["times"]["compute"] > flops / H100_BF16_PEAK
        assert device["times"]["communication"]["psum"] > ring
    assert min(d["memory"]["peak"] for d in report["devices"]) > 2 * 2 * parameters
