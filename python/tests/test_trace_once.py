# Simulation(trace_once=...): an abstract program run once and replayed on every device gives the report that
# running it on every device gives, to the last figure. Each run in a process of its own (one SimGrid engine
# per process).
import json
import subprocess
import sys

PROGRAM = """
import json, sys
import jax
import jax.numpy as jnp
import jax_mlp
import spmdsim

devices = 16
sim = spmdsim.Simulation(preset="h100", topology="switch", devices=devices, trace_once=sys.argv[1] == "on")
params = [(jax.ShapeDtypeStruct((a, b), jnp.float32), jax.ShapeDtypeStruct((b,), jnp.float32))
          for a, b in zip(jax_mlp.SIZES, jax_mlp.SIZES[1:])]
x = jax.ShapeDtypeStruct((devices, 8, jax_mlp.SIZES[0]), jnp.float32)
y = jax.ShapeDtypeStruct((devices, 8, jax_mlp.SIZES[-1]), jnp.float32)
step = jax_mlp.data_parallel_step()
for _ in range(2):
    sim.run(step, params, x, y)
report = sim.report()
print(json.dumps({"calls": report["calls"], "devices": report["devices"]}))
"""


def run(trace_once):
    done = subprocess.run([sys.executable, "-c", PROGRAM, trace_once], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_a_replayed_program_gives_the_report_of_running_it_on_every_device():
    replayed, per_device = run("on"), run("off")
    steps = [c for c in replayed["calls"] if c["name"] == "step"]
    assert len(steps) == 2
    assert all(c["replayed"] for c in steps)
    assert not any(c["replayed"] for c in per_device["calls"])
    assert len(steps[0]["devices"]) == 16
    assert steps[0]["devices"][0]["times"]["communication"]["psum"] > 0
    for call in replayed["calls"]:
        del call["replayed"]
    for call in per_device["calls"]:
        del call["replayed"]
    assert replayed == per_device


def test_trace_once_must_be_a_bool():
    done = subprocess.run([sys.executable, "-c", "import spmdsim; spmdsim.Simulation(devices=2, trace_once=1)"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "trace_once must be True or False, got 1" in done.stderr
