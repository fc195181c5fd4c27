#!/usr/bin/env python3
"""Run reference cases in real JAX and write JSON fixtures for the C++ test suite.

Usage (from the repository root):

    python3 tests/reference/make_fixtures.py

Every case of the catalogue below is run with `jax.pmap` on the CPU backend with
8 simulated host devices, and its inputs and outputs (or the exception JAX raised)
are written to tests/reference/fixtures/<case>.json. Output is deterministic:
running the script again gives byte-identical files. Stale *.json files in the
fixtures folder (cases no longer in the catalogue) are deleted.

Fixture format (see README.md):

    {"case": name, "jax_version": "0.5.2", "num_devices": p,
     "description": "...", "params": {...},
     "inputs": [tree, ...], "outputs": tree            # success
     "error": {"type": "...", "message": "..."}}       # error cases, instead of outputs

A tree is {"array": {"dtype", "shape", "data"}}, {"tuple": [...]}, {"list": [...]},
{"dict": {...}}, {"none": null} or {"static": value}.

Axis specifications in params (in_axes, out_axes) use the same container tags with
bare leaves: an int or null (None); e.g. in_axes=(0, None) is
{"tuple": [0, null]} and in_axes=0 is 0.
"""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

EXPECTED_JAX_VERSION = "0.5.2"
FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures"
P_ALL = (1, 2, 3, 4, 8)


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------

class Static:
    """Marks a positional argument passed as a static (hashable Python) value."""

    def __init__(self, value):
        self.value = value


_DTYPES = {
    np.dtype(np.float16): ("float16", float),
    np.dtype(ml_dtypes.bfloat16): ("bfloat16", float),
    np.dtype(np.float32): ("float32", float),
    np.dtype(np.float64): ("float64", float),
    np.dtype(np.int32): ("int32", int),
    np.dtype(np.bool_): ("bool", bool),
}


def encode_array(a):
    a = np.asarray(a)
    if a.dtype not in _DTYPES:
        raise TypeError(f"unsupported dtype {a.dtype}")
    name, conv = _DTYPES[a.dtype]
    # float(np.float32(v)) is exact, and json writes floats with repr, so
    # float32 values round-trip bit for bit.
    if a.dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        data = [float(v) for v in a.reshape(-1).astype(np.float64)]
    else:
        data = [conv(v) for v in a.reshape(-1).tolist()]
    for v in data:
        if isinstance(v, float) and not np.isfinite(v):
            raise ValueError("non-finite value in fixture data")
    return {"array": {"dtype": name, "shape": list(a.shape), "data": data}}


def encode_tree(x):
    if isinstance(x, Static):
        return {"static": x.value}
    if x is None:
        return {"none": None}
    if isinstance(x, tuple):
        return {"tuple": [encode_tree(v) for v in x]}
    if isinstance(x, list):
        return {"list": [encode_tree(v) for v in x]}
    if isinstance(x, dict):
        return {"dict": {str(k): encode_tree(v) for k, v in x.items()}}
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):
        return encode_array(x)
    raise TypeError(f"cannot encode {type(x).__name__} in a tree")


def encode_axes(spec):
    """in_axes / out_axes: ints and None as bare leaves, containers tagged."""
    if spec is None or isinstance(spec, int):
        return spec
    if isinstance(spec, tuple):
        return {"tuple": [encode_axes(v) for v in spec]}
    if isinstance(spec, list):
        return {"list": [encode_axes(v) for v in spec]}
    if isinstance(spec, dict):
        return {"dict": {str(k): encode_axes(v) for k, v in spec.items()}}
    raise TypeError(f"cannot encode axis spec {spec!r}")


def call_args(inputs):
    return [x.value if isinstance(x, Static) else x for x in inputs]


# ---------------------------------------------------------------------------
# Deterministic data
# ---------------------------------------------------------------------------

def rng_for(name):
    # A fixed seed per case, derived from its name (stable across runs and machines).
    return np.random.default_rng(zlib.crc32(name.encode("utf-8")))


def normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def small_ints(rng, shape, lo=-5, hi=6):
    return rng.integers(lo, hi, size=shape).astype(np.int32)


def farange(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def devs(n):
    return jax.devices()[:n]


# ---------------------------------------------------------------------------
# Catalogue
# ---------------------------------------------------------------------------

CASES = []


def case(name, num_devices, description, params, build, expect="ok", category="", x64=False):
    """Register a case.

    build(rng) returns (fn, inputs) where fn(*call_args(inputs)) runs the pmapped call
    (building the pmap inside fn, so errors raised by jax.pmap itself are caught too).
    expect: "ok" (must succeed), "error" (must raise), "either" (record what JAX does).
    """
    # Every fixture says which devices= was passed: an int n means jax.devices()[:n],
    # None means the argument was not passed (pmap then uses the local devices).
    params.setdefault("devices", num_devices)
    if "axis_name" not in params:
        raise RuntimeError(f"case {name}: params must give axis_name")
    if x64:
        params["x64"] = True  # run with jax_enable_x64; absent: JAX's default (off)
    CASES.append(dict(name=name, num_devices=num_devices, description=description,
                      params=params, build=build, expect=expect, category=category, x64=x64))


def pm(fn, p, axis_name="i", **kw):
    """jax.pmap on the first p devices (p=None: devices argument not passed)."""
    if p is not None:
        kw["devices"] = devs(p)
    return jax.pmap(fn, axis_name=axis_name, **kw)


def groups_label(groups):
    return "_".join("".join(str(i) for i in g) for g in groups)


# 1. Reductions -------------------------------------------------------------

def add_reductions():
    ops = {"psum": lax.psum, "pmean": lax.pmean, "pmax": lax.pmax, "pmin": lax.pmin}
    for opname, op in ops.items():
        for p in P_ALL:
            def build(rng, p=p, op=op):
                x = normal(rng, (p, 3, 4))
                return (lambda x: pm(lambda v: op(v, "i"), p)(x)), [x]
            case(f"{opname}_p{p}", p,
                 f"pmap(lambda x: lax.{opname}(x, 'i'), axis_name='i', devices=jax.devices()[:{p}])(x), x float32 ({p},3,4)",
                 {"axis_name": "i", "op": opname}, build, category="reductions")
    for p in P_ALL:
        def build(rng, p=p):
            x = small_ints(rng, (p, 5), -100, 101)
            return (lambda x: pm(lambda v: lax.psum(v, "i"), p)(x)), [x]
        case(f"psum_int32_p{p}", p,
             f"pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(x), x int32 ({p},5)",
             {"axis_name": "i", "op": "psum"}, build, category="reductions")

        def build(rng, p=p):
            x = normal(rng, (p,))
            return (lambda x: pm(lambda v: lax.psum(v, "i"), p)(x)), [x]
        case(f"psum_scalar_p{p}", p,
             f"pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(x), x float32 ({p},): a 0-d value per device",
             {"axis_name": "i", "op": "psum"}, build, category="reductions")

        def build(rng, p=p):
            t = {"w": normal(rng, (p, 2, 3)), "b": normal(rng, (p, 3))}
            return (lambda t: pm(lambda v: lax.psum(v, "i"), p)(t)), [t]
        case(f"psum_tree_p{p}", p,
             f"pmap(lambda t: lax.psum(t, 'i'), axis_name='i')(t), t = {{'w': float32 ({p},2,3), 'b': float32 ({p},3)}}",
             {"axis_name": "i", "op": "psum"}, build, category="reductions")


# 2. axis_index_groups --------------------------------------------------------

GROUP_SETS = [
    (4, [[0, 1], [2, 3]]),
    (4, [[0, 2], [1, 3]]),
    (8, [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (6, [[0, 1, 2], [3, 4, 5]]),
]


def add_groups():
    ops = {"psum": lax.psum, "pmean": lax.pmean, "pmax": lax.pmax}
    for p, groups in GROUP_SETS:
        lab = groups_label(groups)
        g = len(groups[0])
        for opname, op in ops.items():
            def build(rng, p=p, op=op, groups=groups):
                x = normal(rng, (p, 3, 4))
                return (lambda x: pm(lambda v: op(v, "i", axis_index_groups=groups), p)(x)), [x]
            case(f"{opname}_groups_{lab}_p{p}", p,
                 f"pmap(lambda x: lax.{opname}(x, 'i', axis_index_groups={groups}), axis_name='i')(x), x float32 ({p},3,4)",
                 {"axis_name": "i", "op": opname, "groups": groups}, build, expect="either",
                 category="axis_index_groups")
        for tiled in (False, True):
            def build(rng, p=p, groups=groups, tiled=tiled):
                x = normal(rng, (p, 2, 3))
                return (lambda x: pm(lambda v: lax.all_gather(v, "i", axis=0, tiled=tiled,
                                                              axis_index_groups=groups), p)(x)), [x]
            t = "tiled" if tiled else "untiled"
            case(f"all_gather_groups_{lab}_{t}_p{p}", p,
                 f"pmap(lambda x: lax.all_gather(x, 'i', axis=0, tiled={tiled}, axis_index_groups={groups}), axis_name='i')(x), x float32 ({p},2,3)",
                 {"axis_name": "i", "op": "all_gather", "axis": 0, "tiled": tiled, "groups": groups},
                 build, expect="either", category="axis_index_groups")
        for tiled in (False, True):
            n = 2 * g if tiled else g

            def build(rng, p=p, groups=groups, tiled=tiled, n=n):
                x = normal(rng, (p, n, 3))
                return (lambda x: pm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0, tiled=tiled,
                                                                axis_index_groups=groups), p)(x)), [x]
            t = "tiled" if tiled else "untiled"
            case(f"psum_scatter_groups_{lab}_{t}_p{p}", p,
                 f"pmap(lambda x: lax.psum_scatter(x, 'i', scatter_dimension=0, tiled={tiled}, axis_index_groups={groups}), axis_name='i')(x), x float32 ({p},{n},3)",
                 {"axis_name": "i", "op": "psum_scatter", "scatter_dimension": 0, "tiled": tiled, "groups": groups},
                 build, expect="either", category="axis_index_groups")


# 3. all_gather ---------------------------------------------------------------

def add_all_gather():
    for p in P_ALL:
        for axis, tiled in ((0, False), (1, False), (2, False), (0, True), (1, True)):
            def build(rng, p=p, axis=axis, tiled=tiled):
                x = normal(rng, (p, 2, 3))
                return (lambda x: pm(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), p)(x)), [x]
            suffix = "_tiled" if tiled else ""
            case(f"all_gather_axis{axis}{suffix}_p{p}", p,
                 f"pmap(lambda x: lax.all_gather(x, 'i', axis={axis}, tiled={tiled}), axis_name='i')(x), x float32 ({p},2,3)",
                 {"axis_name": "i", "axis": axis, "tiled": tiled}, build, category="all_gather")

        def build(rng, p=p):
            x = normal(rng, (p,))
            return (lambda x: pm(lambda v: lax.all_gather(v, "i"), p)(x)), [x]
        case(f"all_gather_scalar_p{p}", p,
             f"pmap(lambda x: lax.all_gather(x, 'i'), axis_name='i')(x), x float32 ({p},): a 0-d value per device",
             {"axis_name": "i", "axis": 0, "tiled": False}, build, category="all_gather")


# 4. psum_scatter ---------------------------------------------------------------

def add_psum_scatter():
    for p in P_ALL:
        for dim, tiled in ((0, False), (1, False), (0, True), (1, True)):
            n = 2 * p if tiled else p
            shape = (p, n, 3) if dim == 0 else (p, 3, n)

            def build(rng, p=p, dim=dim, tiled=tiled, shape=shape):
                x = normal(rng, shape)
                return (lambda x: pm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=dim, tiled=tiled),
                                     p)(x)), [x]
            suffix = "_tiled" if tiled else ""
            case(f"psum_scatter_dim{dim}{suffix}_p{p}", p,
                 f"pmap(lambda x: lax.psum_scatter(x, 'i', scatter_dimension={dim}, tiled={tiled}), axis_name='i')(x), x float32 {shape}",
                 {"axis_name": "i", "scatter_dimension": dim, "tiled": tiled}, build, category="psum_scatter")


# 5. ppermute / 6. pshuffle ----------------------------------------------------

def add_permutes():
    for p in P_ALL:
        perms = {"ring": [(i, (i + 1) % p) for i in range(p)]}
        if p >= 2:
            perms["partial"] = [(0, 1)]
        if p % 2 == 0:
            perms["swap_pairs"] = [(i, i ^ 1) for i in range(p)]
        for kind, perm in perms.items():
            def build(rng, p=p, perm=perm):
                x = normal(rng, (p, 3, 2))
                return (lambda x: pm(lambda v: lax.ppermute(v, "i", perm=perm), p)(x)), [x]
            case(f"ppermute_{kind}_p{p}", p,
                 f"pmap(lambda x: lax.ppermute(x, 'i', perm={perm}), axis_name='i')(x), x float32 ({p},3,2)",
                 {"axis_name": "i", "perm": [list(pr) for pr in perm]}, build, category="ppermute")
        shuffles = {"reverse": [p - 1 - i for i in range(p)], "rotate": [(i + 1) % p for i in range(p)]}
        for kind, perm in shuffles.items():
            def build(rng, p=p, perm=perm):
                x = normal(rng, (p, 3, 2))
                return (lambda x: pm(lambda v: lax.pshuffle(v, "i", perm=perm), p)(x)), [x]
            case(f"pshuffle_{kind}_p{p}", p,
                 f"pmap(lambda x: lax.pshuffle(x, 'i', perm={perm}), axis_name='i')(x), x float32 ({p},3,2); device i gets x[perm[i]]",
                 {"axis_name": "i", "perm": perm}, build, category="pshuffle")


# 7. all_to_all -------------------------------------------------------------

def add_all_to_all():
    for p in P_ALL:
        for split, concat, tiled in ((0, 0, False), (0, 1, False), (1, 0, False), (0, 1, True)):
            if tiled:
                shape = (p, 2 * p, 3)
            elif split == 0:
                shape = (p, p, 3)
            else:
                shape = (p, 3, p)

            def build(rng, p=p, split=split, concat=concat, tiled=tiled, shape=shape):
                x = normal(rng, shape)
                return (lambda x: pm(lambda v: lax.all_to_all(v, "i", split, concat, tiled=tiled), p)(x)), [x]
            suffix = "_tiled" if tiled else ""
            case(f"all_to_all_split{split}_concat{concat}{suffix}_p{p}", p,
                 f"pmap(lambda x: lax.all_to_all(x, 'i', split_axis={split}, concat_axis={concat}, tiled={tiled}), axis_name='i')(x), x float32 {shape}",
                 {"axis_name": "i", "split_axis": split, "concat_axis": concat, "tiled": tiled},
                 build, category="all_to_all")


# 8. axis_index ---------------------------------------------------------------

def add_axis_index():
    for p in P_ALL:
        def build(rng, p=p):
            x = normal(rng, (p, 3))
            return (lambda x: pm(lambda v: lax.axis_index("i"), p)(x)), [x]
        case(f"axis_index_p{p}", p,
             f"pmap(lambda x: lax.axis_index('i'), axis_name='i')(x), x float32 ({p},3)",
             {"axis_name": "i"}, build, category="axis_index")

        def build(rng, p=p):
            x = normal(rng, (p, 3))
            return (lambda x: pm(lambda v: v * (lax.axis_index("i") + 1), p)(x)), [x]
        case(f"axis_index_scale_p{p}", p,
             f"pmap(lambda x: x * (lax.axis_index('i') + 1), axis_name='i')(x), x float32 ({p},3)",
             {"axis_name": "i"}, build, category="axis_index")


# 9. pmap arguments ---------------------------------------------------------

def mlp_forward(params, x):
    # The seeds' mlp_forward (tutorial 002).
    for layer in params[:-1]:
        x = jnp.tanh(jnp.dot(x, layer["w"]) + layer["b"])
    final_layer = params[-1]
    return jnp.dot(x, final_layer["w"]) + final_layer["b"]


def my_static_op_example(x_dynamic_shard, static_python_val, another_dynamic_val_replicated):
    # The seeds' my_static_op_example (tutorial 000).
    if static_python_val > 5:
        return x_dynamic_shard * 100 + another_dynamic_val_replicated
    else:
        return x_dynamic_shard * static_python_val + another_dynamic_val_replicated


def process_data_shard_example(data_shard, replicated_scalar_param):
    # The seeds' process_data_shard_example (tutorial 000).
    return jnp.sum(data_shard * replicated_scalar_param, axis=0)


def add_pmap_args():
    p = 4
    cat = "pmap_arguments"

    def b(rng):
        x = normal(rng, (3, p, 2))
        return (lambda x: pm(lambda v: v * 2.0 + 1.0, p, in_axes=1)(x)), [x]
    case(f"pmap_in_axes1_p{p}", p,
         "pmap(lambda x: x * 2 + 1, axis_name='i', in_axes=1)(x), x float32 (3,4,2)",
         {"axis_name": "i", "in_axes": 1}, b, category=cat)

    def b(rng):
        x = normal(rng, (3, 2, p))
        return (lambda x: pm(lambda v: v * 2.0 + 1.0, p, in_axes=2)(x)), [x]
    case(f"pmap_in_axes2_p{p}", p,
         "pmap(lambda x: x * 2 + 1, axis_name='i', in_axes=2)(x), x float32 (3,2,4)",
         {"axis_name": "i", "in_axes": 2}, b, category=cat)

    def b(rng):
        x = normal(rng, (p, 3))
        s = np.array(2.5, dtype=np.float32)
        return (lambda x, s: pm(lambda v, t: v * t, p, in_axes=(0, None))(x, s)), [x, s]
    case(f"pmap_in_axes_0_none_scalar_p{p}", p,
         "pmap(lambda x, s: x * s, axis_name='i', in_axes=(0, None))(x, s), x float32 (4,3), s float32 0-d replicated",
         {"axis_name": "i", "in_axes": encode_axes((0, None))}, b, category=cat)

    def b(rng):
        sizes = [6, 5, 4, 3]
        params = [{"w": (normal(rng, (i, o)) * np.float32(0.1)).astype(np.float32),
                   "b": (normal(rng, (o,)) * np.float32(0.1)).astype(np.float32)}
                  for i, o in zip(sizes[:-1], sizes[1:])]
        x = normal(rng, (p, 2, 6))
        return (lambda params, x: pm(mlp_forward, p, in_axes=(None, 0))(params, x)), [params, x]
    case(f"pmap_mlp_forward_in_axes_none_0_p{p}", p,
         "pmap(mlp_forward, axis_name='i', in_axes=(None, 0))(params, x): seeds' mlp_forward, layer sizes [6,5,4,3], tanh on the 2 hidden layers, params a list of {'w','b'} replicated, x float32 (4,2,6)",
         {"axis_name": "i", "in_axes": encode_axes((None, 0)), "layer_sizes": [6, 5, 4, 3],
          "activation": "tanh"}, b, category=cat)

    def b(rng):
        t = {"w": normal(rng, (p, 2, 3)), "b": normal(rng, (3,))}
        return (lambda t: pm(lambda d: d["w"] * 2.0 + d["b"], p, in_axes=({"w": 0, "b": None},))(t)), [t]
    case(f"pmap_in_axes_dict_prefix_p{p}", p,
         "pmap(lambda t: t['w'] * 2 + t['b'], axis_name='i', in_axes=({'w': 0, 'b': None},))(t), t = {'w': float32 (4,2,3) mapped, 'b': float32 (3,) replicated}",
         {"axis_name": "i", "in_axes": encode_axes(({"w": 0, "b": None},))}, b, category=cat)

    def b(rng):
        x = normal(rng, (p, 3, 2))
        return (lambda x: pm(lambda v: v + 1.0, p, out_axes=1)(x)), [x]
    case(f"pmap_out_axes1_p{p}", p,
         "pmap(lambda x: x + 1, axis_name='i', out_axes=1)(x), x float32 (4,3,2) -> output (3,4,2)",
         {"axis_name": "i", "out_axes": 1}, b, category=cat)

    def b(rng):
        x = normal(rng, (p, 3, 4))
        return (lambda x: pm(lambda v: lax.psum(v, "i"), p, out_axes=None)(x)), [x]
    case(f"pmap_out_axes_none_psum_p{p}", p,
         "pmap(lambda x: lax.psum(x, 'i'), axis_name='i', out_axes=None)(x), x float32 (4,3,4) -> output (3,4)",
         {"axis_name": "i", "out_axes": None}, b, category=cat)

    def b(rng):
        x = normal(rng, (p, 3))
        return (lambda x: pm(lambda v: (v * 2.0, lax.psum(v, "i")), p, out_axes=(0, None))(x)), [x]
    case(f"pmap_out_axes_tuple_0_none_p{p}", p,
         "pmap(lambda x: (x * 2, lax.psum(x, 'i')), axis_name='i', out_axes=(0, None))(x), x float32 (4,3)",
         {"axis_name": "i", "out_axes": encode_axes((0, None))}, b, category=cat)

    for sval in (7, 3):
        def b(rng, sval=sval):
            x = normal(rng, (p, 8))
            r = np.array(0.5, dtype=np.float32)
            f = lambda x, s, r: pm(my_static_op_example, p, static_broadcasted_argnums=(1,),  # noqa: E731
                                   in_axes=(0, None, None))(x, s, r)
            return f, [x, Static(sval), r]
        case(f"pmap_static_argnums_value{sval}_p{p}", p,
             f"pmap(my_static_op_example, axis_name='i', static_broadcasted_argnums=(1,), in_axes=(0, None, None))(x, {sval}, r): seeds' example, x*100+r if static>5 else x*static+r; x float32 (4,8), r float32 0-d 0.5",
             {"axis_name": "i", "static_broadcasted_argnums": [1], "in_axes": encode_axes((0, None, None)),
              "static_value": sval}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 8, 3))
        s = np.array(5.0, dtype=np.float32)
        return (lambda x, s: pm(process_data_shard_example, 2, axis_name="data_axis_subset",
                                in_axes=(0, None))(x, s)), [x, s]
    case("pmap_devices_subset_p2_of_8", 2,
         "pmap(process_data_shard_example, axis_name='data_axis_subset', in_axes=(0, None), devices=jax.devices()[:2])(x, s) with 8 devices present: seeds' jnp.sum(x * s, axis=0); x float32 (2,8,3), s float32 0-d 5.0",
         {"axis_name": "data_axis_subset", "in_axes": encode_axes((0, None)), "devices": 2,
          "available_devices": 8}, b, category=cat)

    def b(rng):
        x = normal(rng, (3,))
        return (lambda x: pm(lambda v: v * 2.0 + lax.axis_index("i"), p, in_axes=None, axis_size=p)(x)), [x]
    case(f"pmap_in_axes_none_axis_size_p{p}", p,
         "pmap(lambda x: x * 2 + lax.axis_index('i'), axis_name='i', in_axes=None, axis_size=4, devices=jax.devices()[:4])(x), x float32 (3,) replicated",
         {"axis_name": "i", "in_axes": None, "axis_size": p}, b, expect="either", category=cat)

    def b(rng):
        x = normal(rng, (p, 3))
        return (lambda x: pm(lambda v: {"double": v * 2.0, "total": lax.psum(v, "i")}, p)(x)), [x]
    case(f"pmap_returns_dict_p{p}", p,
         "pmap(lambda x: {'double': x * 2, 'total': lax.psum(x, 'i')}, axis_name='i')(x), x float32 (4,3)",
         {"axis_name": "i"}, b, category=cat)


# 10. The seeds' examples ------------------------------------------------------

def add_seeds():
    cat = "seeds"
    p = 4

    def scale(x_shard, scale_factor_on_device):
        return (x_shard) * scale_factor_on_device

    def b(rng):
        x = np.arange(16, dtype=np.float32).reshape(4, 4)
        s = np.array([10.0 * (i + 1) for i in range(4)], dtype=np.float32)
        return (lambda x, s: pm(scale, p, in_axes=(0, 0))(x, s)), [x, s]
    case("seed_scale_p4", p,
         "pmap(scale, in_axes=(0, 0), axis_name='i')(x, s), scale(x, s) = x * s; x = arange(16, float32).reshape(4,4), s = [10,20,30,40]",
         {"axis_name": "i", "in_axes": encode_axes((0, 0))}, b, category=cat)

    def process_and_return_fixed_value(data_shard_ignored, param_ignored):
        return jnp.array(42.0)

    def b(rng):
        x = np.zeros((4, 1), dtype=np.float32)
        return (lambda x, n: pm(process_and_return_fixed_value, p, axis_name=None, in_axes=(0, None),
                                out_axes=None)(x, n)), [x, None]
    case("seed_process_and_return_fixed_value_p4", p,
         "pmap(process_and_return_fixed_value, in_axes=(0, None), out_axes=None)(zeros((4,1)), None) -> jnp.array(42.0)",
         {"axis_name": None, "in_axes": encode_axes((0, None)), "out_axes": None}, b, category=cat)

    def scale_and_sum(x):
        scaled_x = x * 2
        local_sum = jnp.sum(scaled_x)
        global_sum = jax.lax.psum(local_sum, axis_name="devices")
        return scaled_x, global_sum

    def b(rng):
        x = np.arange(16, dtype=np.int32).reshape(4, 4)
        return (lambda x: pm(scale_and_sum, p, axis_name="devices")(x)), [x]
    case("seed_scale_and_sum_p4", p,
         "pmap(scale_and_sum, axis_name='devices')(x), returns (x * 2, lax.psum(jnp.sum(x * 2), 'devices')); x = jnp.arange(16).reshape(4,4) int32",
         {"axis_name": "devices"}, b, category=cat)

    def simple_add(x, y):
        return x + y

    def b(rng):
        x = np.arange(8 * 4, dtype=np.int32).reshape(8, 4)
        y = np.ones((8, 4), dtype=np.float32)
        return (lambda x, y: pm(simple_add, 8, axis_name=None)(x, y)), [x, y]
    case("seed_simple_add_p8", 8,
         "pmap(simple_add)(x, y), x + y; x = jnp.arange(32).reshape(8,4) int32, y = jnp.ones((8,4)) float32 -> float32",
         {"axis_name": None}, b, category=cat)

    def parallel_sum_and_mean(x):
        local_sum = jnp.sum(x)
        local_count = x.size
        global_sum = lax.psum(local_sum, axis_name="devices")
        global_count = lax.psum(local_count, axis_name="devices")
        global_mean = global_sum / global_count
        return {"local_sum": local_sum, "global_sum": global_sum, "global_mean": global_mean}

    def b(rng):
        x = normal(rng, (4, 1000))
        return (lambda x: pm(parallel_sum_and_mean, p, axis_name="devices")(x)), [x]
    case("seed_parallel_sum_and_mean_p4", p,
         "pmap(parallel_sum_and_mean, axis_name='devices')(x) -> {'local_sum': sum(x), 'global_sum': psum(sum(x)), 'global_mean': global_sum / psum(x.size)}; x float32 (4,1000)",
         {"axis_name": "devices"}, b, category=cat)

    def device_specific_computation(x, device_id):
        return x * (device_id + 1)

    def b(rng):
        x = np.ones((4, 10), dtype=np.float32)
        ids = np.arange(4, dtype=np.int32)
        return (lambda x, d: pm(device_specific_computation, p, axis_name=None)(x, d)), [x, ids]
    case("seed_device_specific_computation_p4", p,
         "pmap(device_specific_computation)(x, device_ids), x * (device_id + 1); x = jnp.ones((4,10)) float32, device_ids = jnp.arange(4) int32",
         {"axis_name": None}, b, category=cat)


# 11. Error cases -----------------------------------------------------------

def add_errors():
    cat = "errors"

    def add(x, y):
        return x + y

    def b(rng):
        x = normal(rng, (4, 3))
        y = normal(rng, (3, 3))
        return (lambda x, y: pm(add, 4)(x, y)), [x, y]
    case("error_inconsistent_mapped_sizes", 4,
         "pmap(add, axis_name='i', devices=jax.devices()[:4])(x, y), def add(x, y): x + y; x float32 (4,3), y float32 (3,3): mapped sizes 4 and 3",
         {"axis_name": "i", "devices": 4, "arg_names": ["x", "y"], "in_axes": 0}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (9, 2))
        return (lambda x: pm(lambda v: v * 2.0, None)(x)), [x]
    case("error_more_mapped_than_devices_9_of_8", 8,
         "pmap(lambda x: x * 2, axis_name='i')(x) with 8 devices and devices not passed; x float32 (9,2)",
         {"axis_name": "i", "devices": None, "available_devices": 8, "mapped_size": 9}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (9, 2))
        return (lambda x: pm(lambda v: v * 2.0, 8)(x)), [x]
    case("error_more_mapped_than_devices_9_of_8_explicit", 8,
         "pmap(lambda x: x * 2, axis_name='i', devices=jax.devices()[:8])(x); x float32 (9,2)",
         {"axis_name": "i", "devices": 8, "available_devices": 8, "mapped_size": 9}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (3, 2))
        return (lambda x: pm(lambda v: v * 2.0, 2)(x)), [x]
    case("error_more_mapped_than_devices_3_of_2", 2,
         "pmap(lambda x: x * 2, axis_name='i', devices=jax.devices()[:2])(x); x float32 (3,2)",
         {"axis_name": "i", "devices": 2, "available_devices": 8, "mapped_size": 3}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 3))
        return (lambda x: pm(lambda v: v * 2.0, 4)(x)), [x]
    case("error_fewer_mapped_than_devices_2_of_4", 4,
         "pmap(lambda x: x * 2, axis_name='i', devices=jax.devices()[:4])(x); x float32 (2,3): mapped size smaller than the devices passed",
         {"axis_name": "i", "devices": 4, "available_devices": 8, "mapped_size": 2}, b,
         expect="either", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: lax.psum(v, "j"), 4)(x)), [x]
    case("error_unbound_axis_name", 4,
         "pmap(lambda x: lax.psum(x, 'j'), axis_name='i', devices=jax.devices()[:4])(x); x float32 (4,3)",
         {"axis_name": "i", "collective_axis_name": "j", "op": "psum", "devices": 4}, b,
         expect="error", category=cat)

    def f_list(params):
        return params[0] * 2.0

    def b(rng):
        arg = [normal(rng, (4, 3))]
        return (lambda a: pm(f_list, 4, in_axes=({"w": 0},))(a)), [arg]
    case("error_in_axes_tree_mismatch", 4,
         "pmap(f, axis_name='i', in_axes=({'w': 0},))(params), def f(params): params[0] * 2; params = [float32 (4,3)] (a list, in_axes gives a dict)",
         {"axis_name": "i", "in_axes": encode_axes(({"w": 0},)), "arg_names": ["params"], "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        y = normal(rng, (4, 3))
        return (lambda x, y: pm(add, 4, in_axes=(0, 0, 0))(x, y)), [x, y]
    case("error_in_axes_longer_than_args", 4,
         "pmap(add, axis_name='i', in_axes=(0, 0, 0))(x, y), def add(x, y); x, y float32 (4,3)",
         {"axis_name": "i", "in_axes": encode_axes((0, 0, 0)), "arg_names": ["x", "y"], "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        y = normal(rng, (4, 3))
        return (lambda x, y: pm(add, 4, in_axes=(0,))(x, y)), [x, y]
    case("error_in_axes_shorter_than_args", 4,
         "pmap(add, axis_name='i', in_axes=(0,))(x, y), def add(x, y); x, y float32 (4,3)",
         {"axis_name": "i", "in_axes": encode_axes((0,)), "arg_names": ["x", "y"], "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: v * 2.0, 4, in_axes=2)(x)), [x]
    case("error_in_axes_beyond_rank", 4,
         "pmap(lambda x: x * 2, axis_name='i', in_axes=2, devices=jax.devices()[:4])(x); x float32 (4,3) (rank 2)",
         {"axis_name": "i", "in_axes": 2, "arg_names": ["x"], "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        y = normal(rng, (4, 3))
        return (lambda x, y: pm(add, 4, static_broadcasted_argnums=(5,))(x, y)), [x, y]
    case("error_static_argnums_out_of_range", 4,
         "pmap(add, axis_name='i', static_broadcasted_argnums=(5,))(x, y), def add(x, y); x, y float32 (4,3)",
         {"axis_name": "i", "static_broadcasted_argnums": [5], "arg_names": ["x", "y"], "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3, 3))
        return (lambda x: pm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0), 4)(x)), [x]
    case("error_psum_scatter_untiled_size_ne_p", 4,
         "pmap(lambda x: lax.psum_scatter(x, 'i', scatter_dimension=0, tiled=False), axis_name='i')(x); x float32 (4,3,3): per-device dim 0 has size 3 != 4",
         {"axis_name": "i", "scatter_dimension": 0, "tiled": False, "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 6, 3))
        return (lambda x: pm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0, tiled=True), 4)(x)), [x]
    case("error_psum_scatter_tiled_not_divisible", 4,
         "pmap(lambda x: lax.psum_scatter(x, 'i', scatter_dimension=0, tiled=True), axis_name='i')(x); x float32 (4,6,3): per-device dim 0 has size 6, not divisible by 4",
         {"axis_name": "i", "scatter_dimension": 0, "tiled": True, "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3, 3))
        return (lambda x: pm(lambda v: lax.all_to_all(v, "i", 0, 1), 4)(x)), [x]
    case("error_all_to_all_untiled_size_ne_p", 4,
         "pmap(lambda x: lax.all_to_all(x, 'i', split_axis=0, concat_axis=1, tiled=False), axis_name='i')(x); x float32 (4,3,3): per-device split axis has size 3 != 4",
         {"axis_name": "i", "split_axis": 0, "concat_axis": 1, "tiled": False, "devices": 4}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 6, 3))
        return (lambda x: pm(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), 4)(x)), [x]
    case("error_all_to_all_tiled_not_divisible", 4,
         "pmap(lambda x: lax.all_to_all(x, 'i', split_axis=0, concat_axis=1, tiled=True), axis_name='i')(x); x float32 (4,6,3): per-device split axis has size 6, not divisible by 4",
         {"axis_name": "i", "split_axis": 0, "concat_axis": 1, "tiled": True, "devices": 4}, b,
         expect="error", category=cat)

    for kind, perm in (("repeated_source", [(0, 1), (0, 2)]), ("repeated_destination", [(0, 1), (2, 1)])):
        def b(rng, perm=perm):
            x = normal(rng, (4, 3))
            return (lambda x: pm(lambda v: lax.ppermute(v, "i", perm=perm), 4)(x)), [x]
        case(f"error_ppermute_{kind}", 4,
             f"pmap(lambda x: lax.ppermute(x, 'i', perm={perm}), axis_name='i')(x); x float32 (4,3)",
             {"axis_name": "i", "perm": [list(pr) for pr in perm], "devices": 4}, b,
             expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: lax.ppermute(v, "i", perm=[(0, 4)]), 4)(x)), [x]
    case("error_ppermute_index_out_of_range", 4,
         "pmap(lambda x: lax.ppermute(x, 'i', perm=[(0, 4)]), axis_name='i')(x); x float32 (4,3): destination 4 with 4 devices",
         {"axis_name": "i", "perm": [[0, 4]], "devices": 4}, b, expect="either", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: lax.pshuffle(v, "i", perm=[0, 0, 1, 2]), 4)(x)), [x]
    case("error_pshuffle_not_a_permutation", 4,
         "pmap(lambda x: lax.pshuffle(x, 'i', perm=[0, 0, 1, 2]), axis_name='i')(x); x float32 (4,3)",
         {"axis_name": "i", "perm": [0, 0, 1, 2], "devices": 4}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 2, 3))
        return (lambda x: pm(lambda v: lax.all_gather(v, "i", axis=3), 4)(x)), [x]
    case("error_all_gather_axis_out_of_range", 4,
         "pmap(lambda x: lax.all_gather(x, 'i', axis=3), axis_name='i')(x); x float32 (4,2,3): per-device value is 2-d",
         {"axis_name": "i", "axis": 3, "tiled": False, "devices": 4}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: v * 2.0, 4, out_axes=2)(x)), [x]
    case("error_out_axes_beyond_rank", 4,
         "pmap(lambda x: x * 2, axis_name='i', out_axes=2)(x); x float32 (4,3): per-device output is 1-d, so out_axes must be in [-2, 1]",
         {"axis_name": "i", "out_axes": 2, "devices": 4}, b, expect="error", category=cat)

    def b(rng):
        x = np.zeros((0, 3), dtype=np.float32)
        return (lambda x: pm(lambda v: v * 2.0, 4)(x)), [x]
    # Without devices= JAX 0.5.2 does not raise: XLA aborts the whole process
    # (computation_placer.h: "Check failed: replica_count > 0"), so only the
    # devices= form can be a fixture.
    case("error_mapped_axis_size_zero", 4,
         "pmap(lambda x: x * 2, axis_name='i', devices=jax.devices()[:4])(x); x float32 (0,3): mapped axis of size 0",
         {"axis_name": "i", "devices": 4, "available_devices": 8, "mapped_size": 0}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (3,))
        return (lambda x: pm(lambda v: v * 2.0, None, in_axes=None)(x)), [x]
    case("error_all_in_axes_none_no_axis_size", 8,
         "pmap(lambda x: x * 2, axis_name='i', in_axes=None)(x); x float32 (3,); no mapped argument and no axis_size",
         {"axis_name": "i", "in_axes": None, "devices": None, "available_devices": 8}, b,
         expect="either", category=cat)

    # Groups of unequal sizes ([[0, 1], [2]]) are not checked by JAX 0.5.2: XLA's HLO
    # verifier fails with an XlaRuntimeError whose message embeds this file's path and a
    # line number, so it cannot be a stable fixture and is left out.

    def b(rng):
        x = normal(rng, (4, 3))
        return (lambda x: pm(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]), 4)(x)), [x]
    case("error_groups_not_a_partition", 4,
         "pmap(lambda x: lax.psum(x, 'i', axis_index_groups=[[0, 1], [1, 2]]), axis_name='i')(x); x float32 (4,3)",
         {"axis_name": "i", "op": "psum", "groups": [[0, 1], [1, 2]], "devices": 4}, b,
         expect="either", category=cat)



# 12. Every collective on every dtype ------------------------------------------

DTYPES = {"bool": np.bool_, "int32": np.int32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
          "float32": np.float32, "float64": np.float64}


def dtype_values(rng, shape, dtype):
    # Small integers (booleans for bool): every sum and mean over 4 devices is exact in every dtype, so the
    # values do not depend on the order or the precision XLA reduces in.
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    return rng.integers(-5, 6, size=shape).astype(dtype)


def add_dtypes():
    p = 4
    ring = [(i, (i + 1) % p) for i in range(p)]
    collectives = {
        # name: (params, per-device shape, the function, its text)
        "psum": ({"op": "psum"}, (3,), lambda v: lax.psum(v, "i"), "lax.psum(x, 'i')"),
        "pmean": ({"op": "pmean"}, (3,), lambda v: lax.pmean(v, "i"), "lax.pmean(x, 'i')"),
        "pmax": ({"op": "pmax"}, (3,), lambda v: lax.pmax(v, "i"), "lax.pmax(x, 'i')"),
        "pmin": ({"op": "pmin"}, (3,), lambda v: lax.pmin(v, "i"), "lax.pmin(x, 'i')"),
        "all_gather": ({"axis": 0, "tiled": False}, (3,), lambda v: lax.all_gather(v, "i"),
                       "lax.all_gather(x, 'i')"),
        "psum_scatter": ({"scatter_dimension": 0, "tiled": False}, (p,), lambda v: lax.psum_scatter(v, "i"),
                         "lax.psum_scatter(x, 'i')"),
        "ppermute": ({"perm": [list(pr) for pr in ring]}, (3,), lambda v: lax.ppermute(v, "i", perm=ring),
                     f"lax.ppermute(x, 'i', perm={ring})"),
        "pshuffle": ({"perm": [1, 2, 3, 0]}, (3,), lambda v: lax.pshuffle(v, "i", perm=[1, 2, 3, 0]),
                     "lax.pshuffle(x, 'i', perm=[1, 2, 3, 0])"),
        "all_to_all": ({"split_axis": 0, "concat_axis": 0, "tiled": False}, (p,),
                       lambda v: lax.all_to_all(v, "i", 0, 0), "lax.all_to_all(x, 'i', 0, 0)"),
    }
    for opname, (extra, shape, fn, text) in collectives.items():
        for dname, dtype in DTYPES.items():
            # float64 matters with and without jax_enable_x64 (off: JAX computes it as float32).
            for x64 in ((False, True) if dname == "float64" else (False,)):
                def build(rng, dtype=dtype, shape=shape, fn=fn):
                    x = dtype_values(rng, (p,) + shape, dtype)
                    return (lambda x: pm(fn, p)(x)), [x]
                mode = "_x64" if x64 else ""
                case(f"{opname}_dtype_{dname}{mode}_p{p}", p,
                     f"pmap(lambda x: {text}, axis_name='i')(x), x {dname} {(p,) + shape}"
                     + (" with jax_enable_x64" if x64 else ""),
                     dict({"axis_name": "i"}, **extra), build, expect="either", category="dtypes", x64=x64)


# 13. Nested pmap ----------------------------------------------------------------

def inner_params(axis_name, **kw):
    """The params of an inner pmap (the same keys as the outer pmap's)."""
    return dict({"axis_name": axis_name}, **kw)


def add_nested():
    cat = "nested"

    def nest(fn, inner, p=8, outer_kw=None, inner_kw=None):
        return jax.pmap(jax.pmap(fn, axis_name=inner, **(inner_kw or {})), axis_name="i",
                        devices=devs(p) if p else None, **(outer_kw or {}))

    def normalize(x):  # jax.pmap's docstring
        return x / lax.psum(x, "i"), x / lax.psum(x, "j"), x / lax.psum(x, ("i", "j"))

    for a, b_ in ((2, 4), (4, 2)):
        def b(rng, a=a, b_=b_):
            x = np.arange(1, a * b_ + 1, dtype=np.float32).reshape(a, b_)
            return (lambda x: nest(normalize, "j")(x)), [x]
        case(f"nested_normalize_{a}x{b_}_p8", 8,
             f"pmap(pmap(lambda x: (x / psum(x, 'i'), x / psum(x, 'j'), x / psum(x, ('i', 'j'))), axis_name='j'), axis_name='i')(x), x = arange(1, 9) float32 ({a},{b_}) (jax.pmap's docstring)",
             {"axis_name": "i", "inner": [inner_params("j")]}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: (lax.axis_index("i"), lax.axis_index("j"), lax.axis_index(("i", "j")),
                                          lax.axis_index(("j", "i"))), "j")(x)), [x]
    case("nested_axis_index_p8", 8,
         "pmap(pmap(lambda x: (axis_index('i'), axis_index('j'), axis_index(('i', 'j')), axis_index(('j', 'i'))), axis_name='j'), axis_name='i')(x), x float32 (2,4)",
         {"axis_name": "i", "inner": [inner_params("j")]}, b, category=cat)

    for names in (("i", "j"), ("j", "i")):
        label = "".join(names)

        def b(rng, names=names):
            x = normal(rng, (2, 4, 3))
            return (lambda x: nest(lambda v: lax.all_gather(v, names), "j")(x)), [x]
        case(f"nested_all_gather_{label}_p8", 8,
             f"pmap(pmap(lambda x: lax.all_gather(x, {names}), axis_name='j'), axis_name='i')(x), x float32 (2,4,3)",
             {"axis_name": "i", "inner": [inner_params("j")], "collective_axis_names": list(names), "axis": 0,
              "tiled": False}, b, category=cat)

    ring = [(k, (k + 1) % 8) for k in range(8)]

    def b(rng):
        x = normal(rng, (2, 4, 3))
        return (lambda x: nest(lambda v: lax.ppermute(v, ("i", "j"), perm=ring), "j")(x)), [x]
    case("nested_ppermute_ij_p8", 8,
         f"pmap(pmap(lambda x: lax.ppermute(x, ('i', 'j'), perm={ring}), axis_name='j'), axis_name='i')(x), x float32 (2,4,3)",
         {"axis_name": "i", "inner": [inner_params("j")], "perm": [list(r) for r in ring],
          "collective_axis_names": ["i", "j"]}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 8, 2))
        return (lambda x: nest(lambda v: lax.psum_scatter(v, ("i", "j")), "j")(x)), [x]
    case("nested_psum_scatter_ij_p8", 8,
         "pmap(pmap(lambda x: lax.psum_scatter(x, ('i', 'j')), axis_name='j'), axis_name='i')(x), x float32 (2,4,8,2)",
         {"axis_name": "i", "inner": [inner_params("j")], "scatter_dimension": 0, "tiled": False,
          "collective_axis_names": ["i", "j"]}, b,
         category=cat)

    for names, n in ((("i", "j"), 8), (("i",), 2), (("j",), 4)):
        label = "".join(names)

        def b(rng, names=names, n=n):
            x = normal(rng, (2, 4, n, 3))
            return (lambda x: nest(lambda v: lax.all_to_all(v, names if len(names) > 1 else names[0], 0, 1),
                                   "j")(x)), [x]
        case(f"nested_all_to_all_{label}_p8", 8,
             f"pmap(pmap(lambda x: lax.all_to_all(x, {names if len(names) > 1 else names[0]!r}, 0, 1), axis_name='j'), axis_name='i')(x), x float32 (2,4,{n},3)",
             {"axis_name": "i", "inner": [inner_params("j")], "collective_axis_names": list(names),
              "split_axis": 0, "concat_axis": 1, "tiled": False}, b, category=cat)

    for names, groups in ((("i", "j"), [[0, 1, 2, 3], [4, 5, 6, 7]]), (("i", "j"), [[0, 2, 4, 6], [1, 3, 5, 7]]),
                          (("j",), [[0, 1], [2, 3]])):
        label = "".join(names) + "_" + groups_label(groups)

        def b(rng, names=names, groups=groups):
            x = normal(rng, (2, 4, 3))
            return (lambda x: nest(lambda v: (lax.psum(v, names, axis_index_groups=groups),
                                              lax.pmax(v, names, axis_index_groups=groups)), "j")(x)), [x]
        case(f"nested_groups_{label}_p8", 8,
             f"pmap(pmap(lambda x: (lax.psum(x, {names}, axis_index_groups={groups}), lax.pmax(x, {names}, axis_index_groups={groups})), axis_name='j'), axis_name='i')(x), x float32 (2,4,3)",
             {"axis_name": "i", "inner": [inner_params("j")], "collective_axis_names": list(names),
              "groups": groups}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 3))
        return (lambda x: nest(lambda v: lax.psum(v, "i"), "i")(x)), [x]
    case("nested_shadowed_name_p8", 8,
         "pmap(pmap(lambda x: lax.psum(x, 'i'), axis_name='i'), axis_name='i')(x): the inner 'i' shadows the outer; x float32 (2,4,3)",
         {"axis_name": "i", "inner": [inner_params("i")]}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 3, 4))
        return (lambda x: nest(lambda v: v * 2.0 + lax.axis_index("j"), "j", inner_kw={"in_axes": 1})(x)), [x]
    case("nested_inner_in_axes1_p8", 8,
         "pmap(pmap(lambda x: x * 2 + axis_index('j'), axis_name='j', in_axes=1), axis_name='i')(x), x float32 (2,3,4): the inner axis is axis 1 of each outer slice",
         {"axis_name": "i", "inner": [inner_params("j", in_axes=1)]}, b, category=cat)

    # JAX 0.5.2 lowers an inner pmap's results along axis 0 only: out_axes=1 fails in MLIR.
    def b(rng):
        x = normal(rng, (2, 4, 3))
        return (lambda x: nest(lambda v: v * 2.0, "j", inner_kw={"out_axes": 1})(x)), [x]
    case("error_nested_inner_out_axes1", 8,
         "pmap(pmap(lambda x: x * 2, axis_name='j', out_axes=1), axis_name='i')(x), x float32 (2,4,3)",
         {"axis_name": "i", "inner": [inner_params("j", out_axes=1)]}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (4, 2, 3))
        w = normal(rng, (3,))
        return (lambda x, w: nest(lambda v, u: lax.psum(v * u, ("i", "j")), "j",
                                  outer_kw={"in_axes": (0, None)}, inner_kw={"in_axes": (0, None)})(x, w)), [x, w]
    case("nested_replicated_arg_p8", 8,
         "pmap(pmap(lambda x, w: lax.psum(x * w, ('i', 'j')), axis_name='j', in_axes=(0, None)), axis_name='i', in_axes=(0, None))(x, w), x float32 (4,2,3), w float32 (3,) replicated",
         {"axis_name": "i", "in_axes": encode_axes((0, None)),
          "inner": [inner_params("j", in_axes=encode_axes((0, None)))], "collective_axis_names": ["i", "j"]},
         b, category=cat)

    def b(rng):
        x = np.ones((2, 2, 2), dtype=np.float32)
        fn = jax.pmap(jax.pmap(jax.pmap(lambda v: (lax.psum(v, ("i", "j", "k")), v * lax.axis_index(("k", "i", "j"))),
                                        axis_name="k"), axis_name="j"), axis_name="i", devices=devs(8))
        return (lambda x: fn(x)), [x]
    case("nested_three_levels_p8", 8,
         "pmap(pmap(pmap(lambda x: (psum(x, ('i', 'j', 'k')), x * axis_index(('k', 'i', 'j'))), axis_name='k'), axis_name='j'), axis_name='i')(x), x = ones((2,2,2)) float32",
         {"axis_name": "i", "inner": [inner_params("j"), inner_params("k")]}, b, category=cat)

    def b(rng):
        x = small_ints(rng, (2, 4, 3))
        return (lambda x: nest(lambda v: lax.pmean(v, ("i", "j")), "j")(x)), [x]
    case("nested_pmean_int32_p8", 8,
         "pmap(pmap(lambda x: lax.pmean(x, ('i', 'j')), axis_name='j'), axis_name='i')(x), x int32 (2,4,3)",
         {"axis_name": "i", "inner": [inner_params("j")], "op": "pmean", "collective_axis_names": ["i", "j"]}, b,
         category=cat)

    def b(rng):
        x = normal(rng, (2, 2, 3))
        return (lambda x: nest(lambda v: lax.psum(v, ("i", "j")), "j", p=None)(x)), [x]
    case("nested_psum_p4_of_8", 8,
         "pmap(pmap(lambda x: lax.psum(x, ('i', 'j')), axis_name='j'), axis_name='i')(x) with 8 devices and devices not passed: 4 used; x float32 (2,2,3)",
         {"axis_name": "i", "devices": None, "inner": [inner_params("j")], "collective_axis_names": ["i", "j"]}, b,
         category=cat)

    # What JAX refuses.
    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: v, "j", inner_kw={"devices": devs(4)})(x)), [x]
    case("error_nested_inner_devices", 8,
         "pmap(pmap(lambda x: x, axis_name='j', devices=jax.devices()[:4]), axis_name='i', devices=jax.devices()[:8])(x); x float32 (2,4)",
         {"axis_name": "i", "inner": [inner_params("j", devices=4)]}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: v, "j", p=2)(x)), [x]
    case("error_nested_too_few_devices", 2,
         "pmap(pmap(lambda x: x, axis_name='j'), axis_name='i', devices=jax.devices()[:2])(x); x float32 (2,4): 8 devices needed",
         {"axis_name": "i", "inner": [inner_params("j")], "available_devices": 8}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 2))
        return (lambda x: nest(lambda v: v, "j", p=8)(x)), [x]
    case("error_nested_too_many_devices", 8,
         "pmap(pmap(lambda x: x, axis_name='j'), axis_name='i', devices=jax.devices()[:8])(x); x float32 (2,2): 4 devices needed, 8 passed",
         {"axis_name": "i", "inner": [inner_params("j")]}, b, expect="either", category=cat)

    def b(rng):
        x = normal(rng, (3, 4))
        return (lambda x: nest(lambda v: v, "j", p=None)(x)), [x]
    case("error_nested_more_than_available", 8,
         "pmap(pmap(lambda x: x, axis_name='j'), axis_name='i')(x) with 8 devices; x float32 (3,4): 12 needed",
         {"axis_name": "i", "devices": None, "inner": [inner_params("j")]}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: lax.psum(v, ("i", "k")), "j")(x)), [x]
    case("error_nested_unbound_name", 8,
         "pmap(pmap(lambda x: lax.psum(x, ('i', 'k')), axis_name='j'), axis_name='i')(x); x float32 (2,4)",
         {"axis_name": "i", "inner": [inner_params("j")], "collective_axis_names": ["i", "k"]}, b,
         expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: lax.psum(v, "j"), "j", inner_kw={"out_axes": None})(x)), [x]
    case("error_nested_inner_out_axes_none", 8,
         "pmap(pmap(lambda x: lax.psum(x, 'j'), axis_name='j', out_axes=None), axis_name='i')(x); x float32 (2,4)",
         {"axis_name": "i", "inner": [inner_params("j", out_axes=None)]}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 4))
        return (lambda x: nest(lambda v: v, "j", inner_kw={"axis_size": 3})(x)), [x]
    case("error_nested_inner_axis_size", 8,
         "pmap(pmap(lambda x: x, axis_name='j', axis_size=3), axis_name='i')(x); x float32 (2,4)",
         {"axis_name": "i", "inner": [inner_params("j", axis_size=3)]}, b, expect="error", category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 3))
        y = normal(rng, (2, 3, 3))
        return (lambda x, y: nest(lambda u, v: u + v, "j")(x, y)), [x, y]
    case("error_nested_inner_inconsistent_sizes", 8,
         "pmap(pmap(lambda x, y: x + y, axis_name='j'), axis_name='i')(x, y); x float32 (2,4,3), y float32 (2,3,3): the inner mapped sizes are 4 and 3",
         {"axis_name": "i", "inner": [inner_params("j", arg_names=["u", "v"])]}, b, expect="error", category=cat)


def add_nested_called():
    """A pmap called inside the pmapped function's body, with work around it (the other form of nesting)."""
    cat = "nested"
    called = [{"axis_name": "j", "mapped_size": 4}]

    def b(rng):
        x = normal(rng, (2, 4, 3))
        inner = jax.pmap(lambda v: lax.psum(v, "j") + lax.axis_index("j") + 10 * lax.axis_index("i"), axis_name="j")
        fn = jax.pmap(lambda v: inner(v * 2 + lax.psum(v, "i")) + 1, axis_name="i", devices=devs(8))
        return (lambda x: fn(x)), [x]
    case("nested_called_in_body_p8", 8,
         "pmap(lambda x: pmap(lambda v: psum(v, 'j') + axis_index('j') + 10 * axis_index('i'), axis_name='j')(x * 2 + psum(x, 'i')) + 1, axis_name='i')(x), x float32 (2,4,3)",
         {"axis_name": "i", "inner_called": called}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 3))
        inner = jax.pmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j")
        fn = jax.pmap(lambda v: inner(v) + lax.axis_index("i"), axis_name="i", devices=devs(8))
        return (lambda x: fn(x)), [x]
    case("nested_called_over_both_p8", 8,
         "pmap(lambda x: pmap(lambda v: psum(v, ('i', 'j')), axis_name='j')(x) + axis_index('i'), axis_name='i')(x), x float32 (2,4,3)",
         {"axis_name": "i", "inner_called": called}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 3))
        double = jax.pmap(lambda v: v * 2, axis_name="j")
        total = jax.pmap(lambda v: lax.psum(v, "j"), axis_name="j")
        fn = jax.pmap(lambda v: double(v) + total(v), axis_name="i", devices=devs(8))
        return (lambda x: fn(x)), [x]
    case("nested_called_twice_p8", 8,
         "pmap(lambda x: pmap(lambda v: v * 2, axis_name='j')(x) + pmap(lambda v: psum(v, 'j'), axis_name='j')(x), axis_name='i')(x), x float32 (2,4,3)",
         {"axis_name": "i", "inner_called": called}, b, category=cat)

    def b(rng):
        x = normal(rng, (2, 4, 3))
        inner = jax.pmap(lambda v: v, axis_name="j")
        fn = jax.pmap(lambda v: lax.psum(v, "j") + inner(v), axis_name="i", devices=devs(8))
        return (lambda x: fn(x)), [x]
    case("error_nested_called_unbound_name", 8,
         "pmap(lambda x: psum(x, 'j') + pmap(lambda v: v, axis_name='j')(x), axis_name='i')(x): 'j' is bound inside the inner pmap only; x float32 (2,4,3)",
         {"axis_name": "i", "inner_called": called}, b, expect="error", category=cat)

# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def run_case(c):
    rng = rng_for(c["name"])
    fn, inputs = c["build"](rng)
    out = {
        "case": c["name"],
        "jax_version": jax.__version__,
        "num_devices": c["num_devices"],
        "description": c["description"],
        "params": c["params"],
        "inputs": [encode_tree(x) for x in inputs],
    }
    jax.config.update("jax_enable_x64", c["x64"])
    try:
        result = fn(*call_args(inputs))
        result = jax.tree_util.tree_map(np.asarray, result)
    except Exception as e:  # noqa: BLE001 - every JAX refusal is a fixture
        if c["expect"] == "ok":
            raise RuntimeError(f"case {c['name']} was expected to succeed") from e
        out["error"] = {"type": type(e).__name__, "message": str(e)}
        return out
    finally:
        jax.config.update("jax_enable_x64", False)
    if c["expect"] == "error":
        raise RuntimeError(f"case {c['name']} was expected to fail but returned a value")
    out["outputs"] = encode_tree(result)
    return out


def dumps(obj):
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def build_catalogue():
    CASES.clear()
    add_reductions()
    add_groups()
    add_all_gather()
    add_psum_scatter()
    add_permutes()
    add_all_to_all()
    add_axis_index()
    add_pmap_args()
    add_seeds()
    add_errors()
    add_dtypes()
    add_nested()
    add_nested_called()
    names = [c["name"] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"duplicate case names: {sorted(dup)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIXTURE_DIR, help="output folder")
    ap.add_argument("--only", default=None, help="run only cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="list case names and exit")
    args = ap.parse_args(argv)

    if jax.__version__ != EXPECTED_JAX_VERSION:
        print(f"warning: fixtures are pinned to JAX {EXPECTED_JAX_VERSION}, running {jax.__version__}",
              file=sys.stderr)
    if jax.local_device_count() != 8:
        raise RuntimeError(f"expected 8 CPU devices, got {jax.local_device_count()}")

    build_catalogue()
    cases = [c for c in CASES if args.only is None or args.only in c["name"]]
    if args.list:
        for c in cases:
            print(f"{c['category']}\t{c['name']}")
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    written = set()
    n_err = 0
    for c in cases:
        fx = run_case(c)
        path = args.out / f"{c['name']}.json"
        text = dumps(fx)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.add(path.name)
        if "error" in fx:
            n_err += 1
    if args.only is None:
        for stale in sorted(args.out.glob("*.json")):
            if stale.name not in written:
                stale.unlink()
    print(f"wrote {len(written)} fixtures ({n_err} error cases) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
