# Control flow on the device (lax.cond / lax.switch, lax.while_loop / fori_loop, lax.scan) against JAX on 8 CPU
# host devices: each device takes its own branch and trip count, is charged only for what it ran, and scan
# stacks its ys (also in reverse, also with no xs), also under jax.grad; abstract runs take the costliest
# branch, refuse a while loop whose trip count depends on the arguments, and cost what they leave abstract as
# the real run.
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same
from jax import lax

import spmdsim

n = 8
sim = spmdsim.Simulation(preset="a100", devices=n)
rng = np.random.default_rng(0)
x = rng.standard_normal((n, 6, 4)).astype(np.float32)


def both(f, *args, rtol=1e-6, **pmap_kwargs):
    fn = jax.pmap(f, axis_name="i", **pmap_kwargs)
    assert_same(sim.run(fn, *args), fn(*args), rtol=rtol, atol=1e-5)


def last_call_compute_times():
    """Each device's compute time in the last call of a pmapped function (each is followed by a device_get)."""
    call = [c for c in sim.report()["calls"] if c["name"] != "device_get"][-1]
    return [d["times"]["compute"] for d in call["devices"]]


def test_cond_on_each_devices_data():
    both(lambda v: lax.cond(v.sum() > 0, lambda a: a * 2 + 1, lambda a: jnp.tanh(a) - 1, v), x)


def test_switch_on_the_axis_index():
    branches = [lambda a: a + 1, lambda a: a * a, jnp.sin, lambda a: jnp.cumsum(a, axis=0)]
    both(lambda v: lax.switch(lax.axis_index("i") - 2, branches, v), x)  # indices below 0 and above 3 clamp


def test_cond_with_a_collective_in_both_branches():
    both(lambda v: lax.cond(v.shape[0] > 3, lambda a: lax.psum(a, "i"), lambda a: lax.pmax(a, "i"), v), x)


def test_only_the_taken_branch_is_charged():
    heavy = np.ones((n, 256, 256), np.float32)

    def f(w):
        light = lambda a: a + 1  # noqa: E731
        matmuls = lambda a: a @ a @ a @ a  # noqa: E731
        return lax.cond(lax.axis_index("i") % 2 == 0, matmuls, light, w)

    both(f, heavy, rtol=1e-5)
    times = last_call_compute_times()
    heavy_times, light_times = set(times[0::2]), set(times[1::2])
    assert len(heavy_times) == 1 and len(light_times) == 1
    assert heavy_times.pop() > 2 * light_times.pop()


def test_while_loop_runs_each_devices_own_trip_count():
    def halvings(v):
        return lax.while_loop(lambda c: c[1] > 1.0, lambda c: (c[0] + 1, c[1] / 2), (0, jnp.abs(v).sum()))

    both(halvings, x * np.arange(1, n + 1, dtype=np.float32)[:, None, None] ** 3)


def test_while_loop_closing_over_traced_values_in_condition_and_body():
    def f(v):
        limit, step = jnp.abs(v).sum() + 3, v.max() ** 2 + 0.5
        return lax.while_loop(lambda c: c.sum() < limit, lambda c: c + step * jnp.ones_like(c), jnp.zeros(3))

    both(f, x)


def test_fori_loop_with_dynamic_and_static_bounds():
    both(lambda v, k: lax.fori_loop(0, k, lambda i, a: a * 0.5 + i, v), x, np.arange(n, dtype=np.int32))
    both(lambda v: lax.fori_loop(0, 5, lambda i, a: jnp.tanh(a) + i, v), x)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_xs_and_ys(reverse):
    def f(v):
        def body(carry, row):
            total, count = carry
            total = total + row
            return (total, count + 1), (total * 2, jnp.sum(row) > 0)

        return lax.scan(body, (jnp.zeros(4), 0), v, reverse=reverse)

    both(f, x)


def test_scan_with_length_and_no_xs_and_a_collective_inside():
    def f(v):
        return lax.scan(lambda c, _: (lax.psum(c, "i") / n + 1, c.sum()), v[0], None, length=5)

    both(f, x)


def test_grad_through_a_scan_rnn():
    hidden = 5
    params = {"w": rng.standard_normal((hidden, hidden)).astype(np.float32) * 0.3,
              "u": rng.standard_normal((4, hidden)).astype(np.float32) * 0.3}

    def loss(p, seq):
        def cell(h, row):
            h = jnp.tanh(h @ p["w"] + row @ p["u"])
            return h, h.sum()

        h, sums = lax.scan(cell, jnp.zeros(hidden), seq)
        return jnp.mean(h ** 2) + jnp.mean(sums)

    def step(p, seq):
        value, grads = jax.value_and_grad(loss)(p, seq)
        return lax.pmean(value, "i"), lax.pmean(grads, "i")

    both(step, params, x, in_axes=(None, 0), out_axes=None, rtol=1e-5)


def test_grad_through_a_cond_and_a_checkpointed_scan():
    def loss(w, v):
        v = lax.cond(v.sum() > 0, lambda a: jnp.tanh(a @ w), lambda a: a * w[0], v)
        h, _ = lax.scan(jax.checkpoint(lambda c, row: (jnp.sin(c * row), None)), v[0], v)
        return jnp.sum(h ** 2)

    w = rng.standard_normal((4, 4)).astype(np.float32)
    both(lambda w, v: lax.pmean(jax.grad(loss)(w, v), "i"), w, x, in_axes=(None, 0), out_axes=None, rtol=1e-5)


def test_scan_ys_are_one_buffer_written_in_place():
    # 16 rows of 256 KiB each: the stacked ys (4 MiB) are placed once, not once per iteration.
    rows = np.ones((n, 16, 256, 256), np.float32)
    before = [d["memory"]["peak"] for d in sim.report()["devices"]]
    both(lambda v: lax.scan(lambda c, r: (c, r * 2), 0.0, v)[1], rows)
    peaks = [d["memory"]["peak"] for d in sim.report()["devices"]]
    # The input shard (4 MiB), the ys (4 MiB), a row read and a row computed (256 KiB each).
    mib = 2 ** 20
    assert all(p <= max(b, 8.5 * mib) for p, b in zip(peaks, before))
    assert all(p >= 8 * mib for p in peaks)


def test_abstract_cond_takes_the_costliest_branch_and_scan_gives_shapes():
    w = jax.ShapeDtypeStruct((n, 512, 512), jnp.float32)

    def f(v):
        v = lax.cond(v[0, 0] > 0, lambda a: a + 1, lambda a: a @ a @ a, v)
        return lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(512), v)

    fn = jax.pmap(f, axis_name="i")
    carry, ys = sim.run(fn, w)
    assert carry == jax.ShapeDtypeStruct((n, 512), jnp.float32)
    assert ys == jax.ShapeDtypeStruct((n, 512, 512), jnp.float32)
    abstract_times = last_call_compute_times()
    # The real run whose devices take the matmuls' branch costs the same.
    sim.run(fn, -np.ones((n, 512, 512), np.float32))
    assert last_call_compute_times() == pytest.approx(abstract_times, rel=1e-9)


def test_abstract_run_costs_large_constants_as_the_real_run():
    # The causal mask (64 x 64 from iotas, in every iteration) is abstract in an abstract run, costed the same.
    def f(v):
        def layer(h, w):
            scores = h @ w @ h.T / 64
            return jnp.tanh(jnp.where(jnp.tril(jnp.ones((64, 64), bool)), scores, 0.0) @ h), None

        return lax.scan(layer, v[0], v[1:])[0]

    fn = jax.pmap(f, axis_name="i")
    sim.run(fn, jax.ShapeDtypeStruct((n, 4, 64, 64), jnp.float32))
    abstract_times = last_call_compute_times()
    both(f, rng.standard_normal((n, 4, 64, 64)).astype(np.float32) * 0.1, rtol=1e-5)
    assert last_call_compute_times() == pytest.approx(abstract_times, rel=1e-9)


def test_abstract_while_with_a_trip_count_from_the_arguments_is_refused():
    v = jax.ShapeDtypeStruct((n, 4), jnp.float32)
    fn = jax.pmap(lambda a: lax.while_loop(lambda c: c.sum() < 10, lambda c: c + 1, a), axis_name="i")
    with pytest.raises(ValueError, match="while loop's condition depends on the arguments"):
        sim.run(fn, v)


def test_abstract_while_with_a_static_trip_count_runs():
    v = jax.ShapeDtypeStruct((n, 4), jnp.float32)
    fn = jax.pmap(lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, a))[1],
                  axis_name="i")
    assert sim.run(fn, v) == jax.ShapeDtypeStruct((n, 4), jnp.float32)
