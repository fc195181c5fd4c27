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
import spmdsim

devices = 16


def train_step(params, x):
    def loss_fn(p):
        h = jnp.tanh(x @ p["w1"])
        return jnp.mean((h @ p["w2"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, "dp")
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), jax.lax.pmean(loss, "dp")


sim = spmdsim.Simulation(preset="h100", topology="switch", devices=devices, trace_once=sys.argv[1] == "on")
params = {"w1": jax.ShapeDtypeStruct((256, 512), jnp.bfloat16), "w2": jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)}
step = jax.pmap(train_step, axis_name="dp", in_axes=(None, 0), out_axes=(None, 0))
for _ in range(2):
    sim.run(step, params, jax.ShapeDtypeStruct((devices, 8, 256), jnp.bfloat16))
report = sim.report()
print(json.dumps({"calls": report["calls"], "devices": report["devices"]}))
"""


def run(trace_once):
    done = subprocess.run([sys.executable, "-c", PROGRAM, trace_once], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_a_replayed_program_gives_the_report_of_running_it_on_every_device():
    replayed, per_device = run("on"), run("off")
    steps = [c for c in replayed["calls"] if c["name"] == "train_step"]
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
