# The programs behind tests/reference/make_fixtures.py (the C++ suite's JAX fixtures) through sim.run: every
# case, built as the catalogue builds it (nested pmaps too: the outermost pmap runs on the simulated devices,
# the inner ones inside its trace), gives JAX's values, shapes and dtypes, and where JAX refuses a call spmdsim
# refuses it too.
import sys
from pathlib import Path

import jax
import pytest
from conftest import assert_same

import spmdsim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "reference"))
import make_fixtures  # noqa: E402

sim = spmdsim.Simulation(preset="a100", devices=8)
make_fixtures.build_catalogue()
cases = make_fixtures.CASES


def run_both(case, monkeypatch):
    """JAX's result (or exception) and spmdsim's for one case: its pmap calls run by sim.run."""
    def build():
        fn, inputs = case["build"](make_fixtures.rng_for(case["name"]))
        return fn, make_fixtures.call_args(inputs)

    fn, args = build()
    try:
        expected = fn(*args)
    except Exception as e:  # noqa: BLE001 - a refusal JAX makes is one spmdsim must make too
        expected = e
    real_pmap = jax.pmap

    def simulated_pmap(f, **kwargs):
        pmapped = real_pmap(f, **kwargs)

        def call(*a):
            if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(a)):
                return pmapped(*a)  # a pmap nested in another: traced with it, run by it
            return sim.run(pmapped, *a)

        return call

    monkeypatch.setattr(jax, "pmap", simulated_pmap)
    fn, args = build()
    try:
        return expected, fn(*args)
    except Exception as e:  # noqa: BLE001
        return expected, e


@pytest.mark.parametrize("case", cases, ids=[c["name"] for c in cases])
def test_case_gives_jax_values(case, monkeypatch):
    before = sim.now
    jax.config.update("jax_enable_x64", case["x64"])
    try:
        expected, got = run_both(case, monkeypatch)
    finally:
        jax.config.update("jax_enable_x64", False)
    if isinstance(expected, Exception):
        assert isinstance(got, Exception), f"JAX refused ({expected}); spmdsim returned {got}"
    else:
        assert not isinstance(got, Exception), f"spmdsim refused: {got!r}"
        assert_same(got, expected, rtol=1e-6, atol=1e-6)
        assert sim.now > before  # the call ran on the simulated devices
