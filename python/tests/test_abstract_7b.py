# A 7B-parameter transformer step written in plain JAX (jax_gpt.py: spmdsim's gpt_7b shape), data-parallel
# on simulated H100s, from jax.ShapeDtypeStruct leaves: abstract mode traces, lowers and simulates it with no
# values, and its report holds what every device computed, communicated and kept. 64 devices here; the same
# step on 1,024 devices is benchmarks/python_frontend_benchmark.py's (minutes of wall time, docs/python.md).
import jax
import jax.numpy as jnp
import jax_gpt

import spmdsim

devices = 64


def test_gpt_7b_step_abstract():
    shape = jax_gpt.GPT_7B
    sim = spmdsim.Simulation(preset="h100", topology="switch", devices=devices)
    tokens = jax.ShapeDtypeStruct((devices, 1, shape.seq), jnp.int32)
    params = jax_gpt.param_shapes(shape)
    new_params, loss = sim.run(jax_gpt.data_parallel_step(shape), params, tokens, tokens)
    assert jax.tree_util.tree_structure(new_params) == jax.tree_util.tree_structure(params)
    assert all(a == b for a, b in zip(jax.tree_util.tree_leaves(new_params), jax.tree_util.tree_leaves(params)))
    assert loss == jax.ShapeDtypeStruct((), jnp.float32)
    report = sim.report()
    (call,) = [c for c in report["calls"] if c["name"] == "step"]
    assert len(call["devices"]) == devices
    parameters = sum(leaf.size for leaf in jax.tree_util.tree_leaves(params))
    assert 6.5e9 < parameters < 6.9e9
    # Each device ran the forward and backward (about 6 FLOPs per parameter and token, at most the H100's
    # bf16 peak) and all-reduced its 13.4 GB of bf16 gradients.
    flops = 6 * parameters * shape.seq
    for device in (call["devices"][0], call["devices"][-1]):
        assert device["times"]["compute"] > flops / 989e12
        assert device["times"]["communication"]["psum"] > 0
    # Parameters and their gradients, in bf16, live together at the peak.
    assert min(d["memory"]["peak"] for d in report["devices"]) > 2 * 2 * parameters
