# nccl_ring from Python on an NVIDIA node preset: with NCCL's protocol forced as NCCL_PROTO does, a psum gives
# JAX's values in NCCL's time, and a protocol NCCL does not have is refused before any engine starts.
import jax
import numpy as np
import pytest
from conftest import assert_same

import spmdsim


def test_an_unknown_protocol_is_refused_before_the_engine_starts():
    with pytest.raises(ValueError, match="protocol 'll' is not one of NCCL's: LL, LL128, Simple"):
        spmdsim.Simulation(preset="dgx_h100", protocol="ll")


def test_a_small_psum_with_ll_takes_nccls_ll_latency():
    sim = spmdsim.Simulation(preset="dgx_h100", algorithms={"all_reduce": "nccl_ring"}, protocol="LL")
    x = np.arange(8 * 1024, dtype=np.float32).reshape(8, 1024) / 3
    f = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    assert_same(sim.run(f, x), f(x), rtol=1e-6, atol=1e-3)
    # 4 KiB per device: one channel; the H100's 2 us kernel launch, then NCCL's LL latency on 8 ranks, 6.6 us
    # + 14 steps of 0.6 us, the pieces themselves a few nanoseconds more.
    calls = sim.report()["calls"]
    psum = max(d["times"]["communication"].get("psum", 0) for c in calls for d in c["devices"])
    assert psum == pytest.approx(2e-6 + 6.6e-6 + 14 * 0.6e-6, abs=0.1e-6)

