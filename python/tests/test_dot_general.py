# dot_general as XLA runs it on a GPU: an operand laid out as the transposed matrix (x^T w as jax.grad writes
# it, contracting x's first axis) is read in place, as XLA's TransposeFolding and cuBLAS's transa / transb do.
# One Simulation per process (SimGrid has one engine), so the three products are three calls on its timeline.
import jax
import jax.numpy as jnp
import pytest

import spmdsim


def test_an_operand_read_transposed_costs_no_copy():
    sim = spmdsim.Simulation(preset="h100", topology="switch", devices=1)

    def compute_of(function, *shapes):
        sim.run(jax.pmap(function), *[jax.ShapeDtypeStruct((1, *s), jnp.bfloat16) for s in shapes])
        (call,) = [c for c in sim.report()["calls"] if c["name"] == function.__name__]
        return call["devices"][0]["times"]["compute"]

    def laid_out(x, w):
        return x @ w

    def folded(x, w):
        return jax.lax.dot_general(x, w, (((0,), (0,)), ((), ())))

    def copied(x, w):
        return jnp.transpose(x) @ w

    reference = compute_of(laid_out, (256, 512), (512, 128))
    assert reference > 0
    assert compute_of(folded, (512, 256), (512, 128)) == pytest.approx(reference, rel=1e-12)
    # An explicit transpose before the product is its own kernel in the front end.
    assert compute_of(copied, (512, 256), (512, 128)) > reference
