#!/usr/bin/env python3
"""Check the committed fixtures against independent NumPy statements of each collective.

Usage (from the repository root): python3 tests/reference/check_fixtures.py

Needs only NumPy and ml_dtypes (for bfloat16), not JAX. It reads tests/reference/fixtures/*.json, recomputes the
collective cases from their inputs and params with NumPy, and fails if JAX's recorded
outputs disagree (exactly for data movement, to float32 rounding for reductions). It also
checks the format: every file has the required keys, exactly one of outputs / error.
"""

import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures"
NP_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64,
             "int32": np.int32, "bool": np.bool_}


def decode(t):
    (tag, v), = t.items()
    if tag == "array":
        return np.array(v["data"], dtype=NP_DTYPES[v["dtype"]]).reshape(v["shape"])
    if tag == "tuple":
        return tuple(decode(x) for x in v)
    if tag == "list":
        return [decode(x) for x in v]
    if tag == "dict":
        return {k: decode(x) for k, x in v.items()}
    if tag == "none":
        return None
    if tag == "static":
        return v
    raise ValueError(tag)


def groups_of(params, p):
    return params.get("groups") or [list(range(p))]


def group_of(groups, d):
    for g in groups:
        if d in g:
            return g
    raise ValueError(d)


def reduce_ref(op, x, groups):
    fn = {"psum": np.sum, "pmean": np.mean, "pmax": np.max, "pmin": np.min}[op]
    out = np.empty_like(x)
    for d in range(x.shape[0]):
        g = group_of(groups, d)
        out[d] = fn(x[g].astype(np.float64) if x.dtype == np.float32 else x[g], axis=0)
    return out


def all_gather_ref(x, axis, tiled, groups):
    outs = []
    for d in range(x.shape[0]):
        parts = [x[k] for k in group_of(groups, d)]
        if x[0].ndim == 0 or not tiled:
            outs.append(np.stack(parts, axis=axis))
        else:
            outs.append(np.concatenate(parts, axis=axis))
    return np.stack(outs)


def psum_scatter_ref(x, dim, tiled, groups):
    outs = []
    for d in range(x.shape[0]):
        g = group_of(groups, d)
        total = x[g].astype(np.float64).sum(axis=0)
        pos = g.index(d)
        if tiled:
            n = total.shape[dim] // len(g)
            outs.append(np.take(total, range(pos * n, (pos + 1) * n), axis=dim))
        else:
            outs.append(np.take(total, pos, axis=dim))
    return np.stack(outs)


def all_to_all_ref(x, split, concat, tiled):
    p = x.shape[0]
    outs = []
    for d in range(p):
        if tiled:
            n = x.shape[1 + split] // p
            parts = [np.take(x[k], range(d * n, (d + 1) * n), axis=split) for k in range(p)]
            outs.append(np.concatenate(parts, axis=concat))
        else:
            parts = [np.take(x[k], d, axis=split) for k in range(p)]
            outs.append(np.stack(parts, axis=concat))
    return np.stack(outs)


def sweep_dtype(op, dtype, x64):
    """The result dtype of the dtype sweep's collective, as jax.lax documents it: psum sums booleans as int32,
    pmean divides an integer sum into float32, and without jax_enable_x64 float64 is computed as float32."""
    if dtype == "float64" and not x64:
        dtype = "float32"
    if op == "psum" and dtype == "bool":
        return "int32"
    if op == "pmean" and dtype in ("bool", "int32"):
        return "float32"
    return dtype


def nested_axis_index_ref(a, b):
    i = np.repeat(np.arange(a), b).reshape(a, b)
    j = np.tile(np.arange(b), a).reshape(a, b)
    return i, j, i * b + j, j * a + i


def close(got, want, exact):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return False
    if exact:
        return np.array_equal(got, want)
    return np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-5)


def check(fx):
    name = fx["case"]
    params = fx["params"]
    p = fx["num_devices"]
    if "error" in fx or not fx["inputs"]:
        return None
    args = [decode(t) for t in fx["inputs"]]
    out = decode(fx["outputs"])
    x = args[0]
    groups = groups_of(params, p)
    op = params.get("op")
    if "_dtype_" in name:
        sweep_op = name.split("_dtype_")[0]
        in_dtype = fx["inputs"][0]["array"]["dtype"]
        if fx["outputs"]["array"]["dtype"] != sweep_dtype(sweep_op, in_dtype, params.get("x64", False)):
            return False
        if sweep_op in ("psum", "pmean", "pmax", "pmin"):
            return close(out.astype(np.float64), reduce_ref(sweep_op, x.astype(np.float64), groups), False)
        x = x.astype(np.float32) if x.dtype == np.float64 and not params.get("x64", False) else x
        out = out.astype(x.dtype)
    if name == "nested_axis_index_p8":
        return all(close(o, r, True) for o, r in zip(out, nested_axis_index_ref(2, 4)))
    if name.startswith("nested_normalize"):
        rows = x / x.sum(axis=0, keepdims=True)
        cols = x / x.sum(axis=1, keepdims=True)
        return all(close(o, r, False) for o, r in zip(out, (rows, cols, x / x.sum())))
    if name.startswith(("psum_p", "pmean_p", "pmax_p", "pmin_p", "psum_int32", "psum_scalar")) or \
            (op in ("psum", "pmean", "pmax") and "_groups_" in name):
        return close(out, reduce_ref(op, x, groups), exact=op in ("pmax", "pmin") or x.dtype == np.int32)
    if name.startswith("psum_tree"):
        return all(close(out[k], reduce_ref("psum", x[k], groups), False) for k in ("w", "b"))
    if name.startswith("all_gather"):
        return close(out, all_gather_ref(x, params["axis"], params["tiled"], groups), exact=True)
    if name.startswith("psum_scatter"):
        return close(out, psum_scatter_ref(x, params["scatter_dimension"], params["tiled"], groups), False)
    if name.startswith("ppermute"):
        want = np.zeros_like(x)
        for src, dst in params["perm"]:
            want[dst] = x[src]
        return close(out, want, exact=True)
    if name.startswith("pshuffle"):
        return close(out, x[params["perm"]], exact=True)
    if name.startswith("all_to_all"):
        return close(out, all_to_all_ref(x, params["split_axis"], params["concat_axis"], params["tiled"]), True)
    if name.startswith("axis_index_scale"):
        return close(out, x * (np.arange(p, dtype=np.float32)[:, None] + 1), exact=True)
    if name.startswith("axis_index"):
        return close(out, np.arange(p, dtype=np.int32), exact=True)
    if name == "seed_scale_p4":
        return close(out, args[0] * args[1][:, None], exact=True)
    if name == "seed_simple_add_p8":
        return close(out, args[0].astype(np.float32) + args[1], exact=True)
    if name == "seed_scale_and_sum_p4":
        s = (args[0] * 2).sum()
        return close(out[0], args[0] * 2, True) and close(out[1], np.full(4, s, np.int32), True)
    if name == "seed_parallel_sum_and_mean_p4":
        ls = x.astype(np.float64).sum(axis=1)
        return (close(out["local_sum"], ls, False) and close(out["global_sum"], np.full(4, ls.sum()), False)
                and close(out["global_mean"], np.full(4, ls.sum() / x.size), False))
    if name == "pmap_mlp_forward_in_axes_none_0_p4":
        params_list, xs = args
        h = xs.astype(np.float64)
        for layer in params_list[:-1]:
            h = np.tanh(h @ layer["w"] + layer["b"])
        h = h @ params_list[-1]["w"] + params_list[-1]["b"]
        return close(out, h, False)
    if name == "pmap_out_axes1_p4":
        return close(out, np.moveaxis(x + np.float32(1), 0, 1), True)
    if name == "pmap_in_axes1_p4":
        return close(out, np.moveaxis(x, 1, 0) * np.float32(2) + np.float32(1), True)
    if name == "pmap_in_axes2_p4":
        return close(out, np.moveaxis(x, 2, 0) * np.float32(2) + np.float32(1), True)
    return None  # not independently checked


def main():
    files = sorted(FIXTURE_DIR.glob("*.json"))
    if not files:
        print("no fixtures found", file=sys.stderr)
        return 1
    bad, checked = [], 0
    required = {"case", "jax_version", "num_devices", "description", "params", "inputs"}
    for f in files:
        fx = json.loads(f.read_text())
        missing = required - fx.keys()
        if missing or (("outputs" in fx) == ("error" in fx)) or fx["case"] != f.stem:
            bad.append(f"{f.name}: bad format (missing {sorted(missing)})")
            continue
        ok = check(fx)
        if ok is None:
            continue
        checked += 1
        if not ok:
            bad.append(f"{f.name}: outputs disagree with the NumPy reference")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{len(files)} fixtures, {checked} checked against NumPy, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
