# nccl from Python on an H200 node: a psum of 4 MiB per device runs as NVLS (the NVSwitch reduces), with JAX's
# values in NCCL's NVLS time. One simulation per process: this file is a suite of its own.
import jax
import numpy as np
import pytest
from conftest import assert_same

import spmdsim


def test_nccl_runs_a_large_psum_as_nvls_with_jaxs_values():
    sim = spmdsim.Simulation(preset="hgx_h200", algorithms={"all_reduce": "nccl"})
    x = np.arange(8 * 2**20, dtype=np.float32).reshape(8, 2**20) / 7  # 4 MiB per device
    f = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    assert_same(sim.run(f, x), f(x), rtol=1e-6, atol=1e-2)
    # The H200's 2 us kernel launch, then NVLS: 25 us, then the fill of one loop (16 CTAs x 8 heads x 16 KiB
    # chunks = 2 MiB) and the 4 MiB, at NCCL's tuner's rate (476 GB/s of busbw x 8 / 14) less 3.4 us per
    # 16 KiB chunk step more than at 128 KiB per concurrent operation (docs/collectives.md#nvls).
    calls = sim.report()["calls"]
    psum = max(d["times"]["communication"].get("psum", 0) for c in calls for d in c["devices"])
    rate = 1 / (1 / (476e9 * 8 / 14) + 3.4e-6 / 128 * (1 / 16384 - 1 / 131072))
    assert psum == pytest.approx(2e-6 + 25e-6 + (2 + 4) * 2**20 / rate, rel=1e-3)
