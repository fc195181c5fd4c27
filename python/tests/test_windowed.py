# Convolution and pooling (python/src/windowed.cpp) in each form XLA defines, pmapped, by spmdsim and by JAX:
# the same values, shapes and dtypes, gradients included; a convolution charged its FLOPs; the forms spmdsim
# does not run refused before anything runs.
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_same
from jax import lax

import spmdsim

devices = 4
sim = spmdsim.Simulation(preset="a100", devices=devices)
rng = np.random.default_rng(0)


def both(fn, *args, rtol=1e-5):
    assert_same(sim.run(fn, *args), fn(*args), rtol=rtol, atol=1e-5)


def nhwc(batch, height, width, features):
    return rng.standard_normal((devices, batch, height, width, features), np.float32)


@pytest.mark.parametrize("strides, padding, lhs_dilation, rhs_dilation", [
    ((1, 1), "SAME", (1, 1), (1, 1)),
    ((2, 1), "VALID", (1, 1), (1, 1)),
    ((2, 2), ((2, 1), (0, 3)), (1, 1), (2, 1)),
    ((1, 1), ((1, 1), (1, 1)), (2, 2), (1, 1)),
    ((1, 2), ((-1, 2), (1, -1)), (1, 1), (1, 2)),
])
def test_conv_nhwc_and_its_gradients(strides, padding, lhs_dilation, rhs_dilation):
    x, w = nhwc(2, 9, 8, 3), rng.standard_normal((3, 2, 3, 5), np.float32)  # HWIO

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, strides, padding, lhs_dilation, rhs_dilation,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.tanh(y)), y

    step = jax.pmap(lambda x, w: (jax.grad(lambda *a: loss(*a)[0], argnums=(0, 1))(x, w), loss(x, w)[1]),
                    in_axes=(0, None))
    both(step, x, w)


def test_conv_nchw_oihw_grouped_1d_and_3d():
    x, w = rng.standard_normal((devices, 2, 6, 7, 5), np.float32), rng.standard_normal((4, 3, 3, 2), np.float32)
    grouped = jax.pmap(lambda x, w: lax.conv_general_dilated(x, w, (1, 2), "SAME", feature_group_count=2),
                       in_axes=(0, None))
    both(grouped, x, w)
    depthwise_input_gradient = jax.pmap(jax.grad(
        lambda x, w: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=6) ** 2)),
        in_axes=(0, None))
    both(depthwise_input_gradient, x, rng.standard_normal((6, 1, 2, 2), np.float32))
    x1, w1 = rng.standard_normal((devices, 3, 2, 11), np.float32), rng.standard_normal((4, 2, 3), np.float32)
    both(jax.pmap(lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME"), in_axes=(0, None)), x1, w1)
    x3, w3 = rng.standard_normal((devices, 1, 2, 4, 5, 3), np.float32), rng.standard_normal((2, 2, 2, 3, 2), np.float32)
    both(jax.pmap(lambda x, w: lax.conv_general_dilated(x, w, (1, 1, 1), "SAME", rhs_dilation=(1, 2, 1)),
                  in_axes=(0, None)), x3, w3)


def test_conv_bfloat16_and_preferred_element_type():
    x, w = nhwc(2, 5, 5, 3).astype(jnp.bfloat16), rng.standard_normal((2, 2, 3, 4), np.float32).astype(jnp.bfloat16)
    conv = jax.pmap(lambda x, w: (
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 preferred_element_type=jnp.float32)), in_axes=(0, None))
    both(conv, x, w, rtol=1e-2)


def test_pooling_and_its_gradients():
    x = nhwc(2, 7, 6, 3)
    x[0, 0, 0, :2] = x[0, 0, 1, :2]  # a tie: the gradient goes to the window's first maximum

    def pools(x):
        return (nn.max_pool(x, (2, 2), strides=(2, 2)), nn.max_pool(x, (3, 2), strides=(2, 1), padding="SAME"),
                nn.avg_pool(x, (3, 3), strides=(1, 2), padding="SAME"),
                lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 3, 1), (1, 1, 1, 1), "VALID"))  # min pooling

    both(jax.pmap(pools), x)
    both(jax.pmap(jax.grad(lambda x: sum(jnp.sum(jnp.sin(p)) for p in pools(x)))), x)
    # JAX differentiates no dilated max pooling.
    both(jax.pmap(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                                              base_dilation=(1, 2, 1, 1), window_dilation=(1, 1, 2, 1))), x)


def span_duration(name):
    """The time device 0 spent in its span `name` in the last pmapped call."""
    call = [c for c in sim.report()["calls"] if c["name"] != "device_get"][-1]
    (duration,) = [s["end"] - s["start"] for s in call["devices"][0]["spans"] if s["name"] == name]
    return duration


@pytest.mark.parametrize("kernel", [1, 3])
def test_conv_charged_as_its_gemm(kernel):
    # A convolution is the GEMM of its output pixels by its kernel, contracting input features times kernel
    # elements (im2col): the same FLOPs and GEMM shape, compute-bound at this size, so the same time.
    shape = lambda *s: jax.ShapeDtypeStruct(s, jnp.bfloat16)  # noqa: E731
    conv = jax.pmap(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
                    in_axes=(0, None))
    sim.run(conv, shape(devices, 8, 32, 32, 256), shape(kernel, kernel, 256, 512))
    conv_time = span_duration("conv_general_dilated")
    im2col_matmul = jax.pmap(lambda x, w: x @ w, in_axes=(0, None))
    sim.run(im2col_matmul, shape(devices, 8 * 32 * 32, kernel * kernel * 256), shape(kernel * kernel * 256, 512))
    assert conv_time == pytest.approx(span_duration("matmul"), rel=1e-12)


def test_abstract_conv_and_pool():
    step = jax.pmap(lambda x, w: nn.max_pool(lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (2, 2), strides=(2, 2)),
        in_axes=(0, None))
    out = sim.run(step, jax.ShapeDtypeStruct((devices, 64, 224, 224, 3), jnp.bfloat16),
                  jax.ShapeDtypeStruct((7, 7, 3, 64), jnp.bfloat16))
    assert (out.shape, out.dtype) == ((devices, 64, 112, 112, 64), jnp.bfloat16)


def test_grouped_conv_kernel_gradient_batch_groups():
    # JAX's kernel gradient of a grouped convolution is a convolution with batch_group_count groups; its input
    # gradient reshapes the kernel with lax.reshape's `dimensions`.
    x, w = rng.standard_normal((devices, 2, 4, 5, 5), np.float32), rng.standard_normal((6, 2, 2, 2), np.float32)
    for groups, kernel in ((2, w), (4, w[:4, :1])):
        grouped_gradients = jax.pmap(jax.grad(lambda w, x: jnp.sum(jnp.sin(lax.conv_general_dilated(
            x, w, (2, 1), "SAME", rhs_dilation=(1, 2), feature_group_count=groups))), argnums=(0, 1)),
            in_axes=(None, 0))
        both(grouped_gradients, kernel, x)


def test_unsupported_forms_refused():
    x = rng.standard_normal((devices, 2, 4, 5, 5), np.float32)
    generic = jax.pmap(lambda x: lax.reduce_window(x, 1.0, lax.mul, (1, 1, 2, 2), (1, 1, 1, 1), "VALID"))
    with pytest.raises(spmdsim.UnsupportedPrimitiveError, match="'reduce_window' at .*test_windowed.py"):
        sim.run(generic, x)
