# XLA's fusion in the front end (docs/python.md, "Fusion"): elementwise chains and their reductions run as one
# kernel, charged one launch, the bytes of its inputs read and of the results read after it written; a
# reduction's consumers begin the next kernel; independent chains are separate kernels; the kernels follow
# the data, not the jaxpr's order; the intermediates never reach device memory. The closed forms use the
# device's launch cost L and achieved bandwidth B as the engine charges them to one unfused op, solved from
# two sizes of neg. One Simulation per process (SimGrid has one engine): the calls below are one timeline,
# the unfused run is a subprocess. Span times are read off SimGrid's clock, hence a relative tolerance of
# 1e-6, where the row sums' bytes more or less would show as 2e-4.
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same

import spmdsim

ROWS, COLS = 512, 1024
N, R = ROWS * COLS, ROWS  # elements of x, of a row reduction's result


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(preset="h100", topology="switch", devices=1)


def kernels(sim, function, *shapes):
    """The compute spans (name, seconds) of one abstract float32 call of `function` on device 0."""
    sim.run(jax.pmap(function), *[jax.ShapeDtypeStruct((1, *s), jnp.float32) for s in shapes])
    (call,) = [c for c in sim.report()["calls"] if c["name"] == function.__name__]
    return [(s["name"], s["end"] - s["start"]) for s in call["devices"][0]["spans"] if s["kind"] == "compute"]


@pytest.fixture(scope="module")
def launch_and_bandwidth(sim):
    def negate(x):
        return -x

    def negate_twice_as_many(x):
        return -x

    ((_, t1),) = kernels(sim, negate, (ROWS, COLS))
    ((_, t2),) = kernels(sim, negate_twice_as_many, (2 * ROWS, COLS))
    bandwidth = 8 * N / (t2 - t1)  # 4 bytes read and 4 written per element
    return 2 * t1 - t2, bandwidth


def one_kernel(launch_and_bandwidth, bytes_moved):
    launch, bandwidth = launch_and_bandwidth
    return launch + bytes_moved / bandwidth


def test_an_elementwise_chain_is_one_kernel(sim, launch_and_bandwidth):
    def chain(x):
        return jnp.tanh(x * 2.0 + 1.0)

    ((name, seconds),) = kernels(sim, chain, (ROWS, COLS))
    assert name == "loop_tanh_fusion"
    assert seconds == pytest.approx(one_kernel(launch_and_bandwidth, 8 * N), rel=1e-6)


def test_a_reduction_ends_its_kernel(sim, launch_and_bandwidth):
    def normalized(x):
        e = jnp.exp(x)
        return e / jnp.sum(e, axis=-1, keepdims=True)

    (first, first_s), (second, second_s) = kernels(sim, normalized, (ROWS, COLS))
    # exp and the sum: x read, e and the row sums written; the broadcast and the division: both read, one written.
    assert (first, second) == ("input_reduce_sum_fusion", "loop_div_fusion")
    assert first_s == pytest.approx(one_kernel(launch_and_bandwidth, 4 * (2 * N + R)), rel=1e-6)
    assert second_s == pytest.approx(one_kernel(launch_and_bandwidth, 4 * (2 * N + R)), rel=1e-6)


def test_a_convert_or_reshape_after_a_reduction_stays_in_its_kernel(sim, launch_and_bandwidth):
    def squared_norms(x):
        return jnp.sum(x * x, axis=-1).astype(jnp.bfloat16).reshape(R, 1)

    ((name, seconds),) = kernels(sim, squared_norms, (ROWS, COLS))
    assert name == "input_reduce_sum_fusion"
    assert seconds == pytest.approx(one_kernel(launch_and_bandwidth, 4 * N + 2 * R), rel=1e-6)


def test_independent_chains_are_separate_kernels(sim, launch_and_bandwidth):
    def two_chains(a, b):
        return a * 2.0 + 1.0, b * 3.0 - 1.0

    spans = kernels(sim, two_chains, (ROWS, COLS), (ROWS, COLS))
    assert [name for name, _ in spans] == ["loop_add_fusion", "loop_sub_fusion"]
    for _, seconds in spans:
        assert seconds == pytest.approx(one_kernel(launch_and_bandwidth, 8 * N), rel=1e-6)


def test_a_chain_fuses_across_an_unrelated_product(sim, launch_and_bandwidth):
    def interleaved(x, w):
        a = x * 2.0
        y = x @ w  # between the chain's first op and the rest in the jaxpr
        return jnp.tanh(a + 1.0), y

    spans = kernels(sim, interleaved, (ROWS, COLS), (COLS, COLS))
    assert [name for name, _ in spans] == ["matmul", "loop_tanh_fusion"]  # the kernel runs where its last op is
    assert spans[1][1] == pytest.approx(one_kernel(launch_and_bandwidth, 8 * N), rel=1e-6)


def test_a_matmul_is_its_own_kernel_and_its_epilogue_one_more(sim):
    def layer(x, w, b):
        return jnp.tanh(x @ w + b)

    assert [name for name, _ in kernels(sim, layer, (ROWS, COLS), (COLS, COLS), (COLS,))] == [
        "matmul", "loop_tanh_fusion"]


def test_intermediates_never_reach_device_memory(sim):
    def chain_in_memory(x):
        return jnp.tanh(x * 2.0 + 1.0)

    kernels(sim, chain_in_memory, (ROWS, COLS))
    (call,) = [c for c in sim.report()["calls"] if c["name"] == "chain_in_memory"]
    assert call["devices"][0]["memory"]["peak"] == 2 * 4 * N  # its input and its result


def test_values_are_jaxs(sim):
    def softmax(x):
        return jax.nn.softmax(x * 0.5 - 1.0, axis=-1)

    x = np.random.default_rng(0).standard_normal((1, 8, 16)).astype(np.float32)
    assert_same(sim.run(jax.pmap(softmax), x), jax.pmap(softmax)(x))


UNFUSED = """
import jax, jax.numpy as jnp, json, spmdsim
sim = spmdsim.Simulation(preset="h100", topology="switch", devices=1, fusion=False)
def chain(x):
    return jnp.tanh(x * 2.0 + 1.0)
def negate(x):
    return -x
for f in (chain, negate):
    sim.run(jax.pmap(f), jax.ShapeDtypeStruct((1, %d, %d), jnp.float32))
calls = {c["name"]: c for c in sim.report()["calls"]}
print(json.dumps([calls["chain"], calls["negate"]]))
""" % (ROWS, COLS)


def test_without_fusion_every_primitive_is_its_own_kernel():
    out = subprocess.run([sys.executable, "-c", UNFUSED], check=True, capture_output=True, text=True).stdout
    chain, negate = [[s for s in c["devices"][0]["spans"] if s["kind"] == "compute"] for c in json.loads(out)]
    assert len(chain) == 3
    ((negate_span),) = negate
    for span in chain:  # each reads one array and writes one, as neg does
        assert span["end"] - span["start"] == pytest.approx(negate_span["end"] - negate_span["start"], rel=1e-6)


def test_fusion_must_be_a_bool():
    with pytest.raises(TypeError, match="fusion must be True or False"):
        spmdsim.Simulation(preset="h100", devices=1, fusion="yes")
