"""spmdsim: run a jax.pmap function on simulated devices (docs/python.md).

    sim = spmdsim.Simulation(preset="dgx_h100")
    out = sim.run(jax.pmap(step, axis_name="batch"), params, batch)
    print(sim.report_table())
"""
from spmdsim._core import OutOfMemoryError, primitives
from spmdsim.lowering import UnsupportedPrimitiveError
from spmdsim.simulation import Simulation

__all__ = ["Simulation", "OutOfMemoryError", "UnsupportedPrimitiveError", "primitives"]
