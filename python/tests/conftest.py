# JAX runs the same programs on as many CPU host devices as spmdsim simulates, to compare values: the flag
# must be set before jax is imported.
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402


def assert_same(got, expected, rtol=1e-6, atol=1e-6):
    """The same tree, shapes and dtypes as JAX's, and values within rounding."""
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    expected_leaves, expected_tree = jax.tree_util.tree_flatten(expected)
    assert got_tree == expected_tree
    for g, e in zip(got_leaves, expected_leaves):
        e = np.asarray(e)
        assert g.shape == e.shape
        assert g.dtype == e.dtype
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64), rtol=rtol,
                                   atol=atol)
