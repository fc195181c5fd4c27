"""The Python front end's cost over the C++ API's, measured side by side in one run (docs/python.md,
"Performance"): the same kind of training step simulated both ways, wall time of each and their ratio.

  .venv/bin/python benchmarks/python_frontend_benchmark.py [--devices 1024] [--repeats 1] [--aggregated-only]

- gpt_7b, abstract: the 7B transformer written in plain JAX (python/tests/jax_gpt.py) run by sim.run from
  jax.ShapeDtypeStruct leaves, against `spmdsim train --model gpt_7b --abstract --precision mixed_bf16`, one
  step each on the same platform (B200s behind one switch: the C++ model's fp32 master weights need more than
  an H100's 80 GB); once with every ring walked message by message, once with its phases aggregated
  (Simulation(aggregate=True) against --aggregate), the mode meant for large device counts.
- mlp, real data: a data-parallel MLP step in plain JAX (784-256-128-10, tanh, softmax cross-entropy, SGD)
  against `spmdsim train` on the same MLP, one step each.

The front end runs twice per row: as `python script.py` (glibc's malloc, Python's default) and as
`python -m spmdsim.launch script.py` (jemalloc, the allocator the `spmdsim` command links); each ratio is over
the command's time. Each simulation runs in its own process (SimGrid has one engine per process); the wall time
is the child's, start to end, so every side pays its start-up: the front end its imports, tracing and lowering,
the command its platform and model set-up. The sides of a row run one after the other, so a loaded machine
slows all of them.
"""
import argparse
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPMDSIM = ROOT / "build" / "experiments" / "spmdsim"
PYTHON = ROOT / ".venv" / "bin" / "python"

FRONT_END_GPT = """
import sys; sys.path.insert(0, {tests!r})
import jax, jax.numpy as jnp, spmdsim, jax_gpt
sim = spmdsim.Simulation(preset="b200", topology="switch", devices={p}, aggregate={aggregate})
step = jax_gpt.data_parallel_step(jax_gpt.GPT_7B)
tokens = jax.ShapeDtypeStruct(({p}, 1, jax_gpt.GPT_7B.seq), jnp.int32)
sim.run(step, jax_gpt.param_shapes(jax_gpt.GPT_7B), tokens, tokens)
"""

FRONT_END_MLP = """
import sys; sys.path.insert(0, {tests!r})
import spmdsim, jax_mlp
sim = spmdsim.Simulation(preset="b200", topology="switch", devices={p})
pmapped = jax_mlp.data_parallel_step()
params, x, y = jax_mlp.parameters_and_batch({p}, {batch})
for _ in range({steps}):
    params, loss = sim.run(pmapped, params, x, y)
"""


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


SIDES = ("python", "jemalloc", "c++")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1024, help="devices of the gpt_7b rows (default 1024)")
    parser.add_argument("--mlp-devices", type=int, default=8, help="devices of the MLP rows (default 8)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side per row (default 1)")
    parser.add_argument("--aggregated-only", action="store_true",
                        help="skip the gpt_7b row that walks every ring (minutes at 1,024 devices)")
    args = parser.parse_args()
    for needed in (SPMDSIM, PYTHON):
        if not needed.exists():
            sys.exit(f"error: {needed} is missing: run `bash scripts/bootstrap.sh demo` first")
    p, q, batch = args.devices, args.mlp_devices, 256
    common = ["--preset", "b200", "--topology", "switch", "--optimizer", "sgd"]
    tests = str(ROOT / "python" / "tests")
    scripts = tempfile.TemporaryDirectory()
    written = itertools.count()

    def front_end(side, program):
        script = Path(scripts.name) / f"front_end_{next(written)}.py"
        script.write_text(program)
        launcher = ["-m", "spmdsim.launch"] if side == "jemalloc" else []
        return [str(PYTHON), *launcher, str(script)]

    def gpt(side, aggregate):
        if side != "c++":
            return front_end(side, FRONT_END_GPT.format(tests=tests, p=p, aggregate=aggregate))
        return [str(SPMDSIM), "train", "--model", "gpt_7b", "--devices", str(p), "--batch", str(p), "--abstract",
                "--precision", "mixed_bf16", "--steps", "1", *common, *(["--aggregate"] if aggregate else [])]

    def mlp(side, steps):
        if side != "c++":
            return front_end(side, FRONT_END_MLP.format(tests=tests, p=q, batch=batch, steps=steps))
        return [str(SPMDSIM), "train", "--devices", str(q), "--batch", str(batch), "--steps", str(steps), *common]

    def mean_time(command):
        return sum(timed(command) for _ in range(args.repeats)) / args.repeats

    def print_row(name, devices, row, digits):
        times = " ".join(f"{row[side]:>10.{digits}f}" for side in SIDES)
        ratios = " ".join(f"{row[side] / row['c++']:>6.2f}" for side in ("python", "jemalloc"))
        print(f"{name:<34} {devices:>7} {times} {ratios}", flush=True)

    print(f"{'#step':<34} {'devices':>7} {'python(s)':>10} {'jemalloc(s)':>10} {'c++(s)':>10} {'ratio':>6} "
          f"{'ratio-je':>6}")
    with scripts:
        for aggregate in ([True] if args.aggregated_only else [False, True]):
            row = {side: mean_time(gpt(side, aggregate)) for side in SIDES}
            print_row(f"gpt_7b abstract, {'aggregated' if aggregate else 'walked'}", p, row, 2)
        row = {side: (mean_time(mlp(side, 11)) - mean_time(mlp(side, 1))) / 10 for side in SIDES}
        print_row("mlp real data, per step", q, row, 4)


if __name__ == "__main__":
    main()
