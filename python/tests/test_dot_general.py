# dot_general as XLA runs it on a GPU: an operand laid out as the transposed matrix (x^T w as jax.grad writes
# it, contracting x's first axis) is read in place, as XLA's TransposeFolding and cuBLAS's transa / transb do;
# a product's transpose is the product with its operands swapped, as XLA's algebraic simplifier rewrites it.
# One Simulation per process (SimGrid has one engine), so the products are calls on its timeline.
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmdsim


@pytest.fixture(scope="module")
def sim():
    return spmdsim.Simulation(preset="h100", topology="switch", devices=1)


def kernels_of(sim, name):
    (call,) = [c for c in sim.report()["calls"] if c["name"] == name]
    return [s["name"] for s in call["devices"][0]["spans"] if s["kind"] == "compute"]


def test_an_operand_read_transposed_costs_no_copy(sim):
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


def test_a_transposed_product_is_the_swapped_product(sim):
    # jax.grad writes the weight gradient x^T dy as dot_general(dy, x) then a transpose: one product on the
    # device, as XLA compiles it, and JAX's values.
    def weight_gradient(x, dy):
        return jax.grad(lambda w: jnp.vdot(x @ w, dy))(jnp.zeros((64, 32), x.dtype))

    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((1, 8, 64), np.float32), rng.standard_normal((1, 8, 32), np.float32)
    out = sim.run(jax.pmap(weight_gradient), x, dy)
    np.testing.assert_allclose(out, jax.pmap(weight_gradient)(x, dy), rtol=1e-5, atol=1e-6)
    assert "transpose" not in kernels_of(sim, "weight_gradient")


def test_a_product_read_twice_is_still_transposed(sim):
    # The simplifier leaves a product that something else also reads: its transpose is a kernel.
    def both(a, b):
        p = a @ b
        return p.T, p

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((1, 8, 64), np.float32), rng.standard_normal((1, 64, 32), np.float32)
    transposed, product = sim.run(jax.pmap(both), a, b)
    np.testing.assert_allclose(transposed, np.swapaxes(product, 1, 2))
    assert kernels_of(sim, "both").count("transpose") == 1
