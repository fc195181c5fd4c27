"""pmap's per-device jaxpr lowered to spmdsim's Program (python/src/program.hpp).

Each equation becomes one instruction: its primitive's name, its input and output slots, its output shapes
and dtypes (JAX's, which the engine keeps), and its parameters as the C++ rule reads them. Call-like
primitives (pjit, custom_jvp_call, custom_vjp_call, remat, closed_call) are inlined: their inner jaxpr's
equations join the program. Control flow (cond, while, scan) keeps its structure: its jaxprs are lowered to
programs of their own, the instruction's callees, which its rule runs on the device as many times as the
device's values say. A nested pmap (an xla_pmap equation) becomes one instruction whose callee is its jaxpr's
program; its axis is recorded, one per depth of nesting, so that the outer pmap takes the devices of every
axis before it starts. A primitive spmdsim has no rule for fails here, before anything runs, naming the
primitive and the line of the user's function it comes from.
"""
import functools
import math

import jax.numpy as jnp
import numpy as np
from jax._src import core as jcore
from jax._src import source_info_util

from spmdsim import _core

# Call-like primitives and the parameter that holds the jaxpr they call.
_INLINED = {
    "pjit": "jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
    "remat": "jaxpr",
    "remat2": "jaxpr",  # jax.checkpoint's primitive
    "checkpoint": "jaxpr",
}


class UnsupportedPrimitiveError(ValueError):
    """A primitive of the user's function that spmdsim cannot run (the message names it and where it is)."""


def where(eqn):
    return source_info_util.summarize(eqn.source_info)


def dtype_name(aval):
    return np.dtype(aval.dtype).name


def constant(value, dtype):
    return _core.array(np.asarray(value, dtype=np.float64), np.dtype(dtype).name)


def _axis_names(eqn, names):
    """The axis names a collective runs over: pmap's, or a tuple of them under nested pmap."""
    names = tuple(names) if isinstance(names, (tuple, list)) else (names,)
    for name in names:
        if not isinstance(name, str):
            raise UnsupportedPrimitiveError(
                f"{eqn.primitive.name} over the positional axis {name!r} at {where(eqn)}: spmdsim runs "
                "collectives over pmap axis names")
    return list(names)


@functools.cache
def _engine_has(dtype):
    """Whether the engine's arrays have this dtype (they have no unsigned integers, no int64 or int8)."""
    try:
        _core.abstract([], dtype)
        return True
    except ValueError:
        return False


def _check_dtypes(eqn):
    """Refuses, before anything runs, an equation on values of a dtype the engine lacks (uint32: jax.random's
    key words, nnx.Optimizer's step counter), naming it and where it is."""
    for var in (*eqn.invars, *eqn.outvars):
        dtype = getattr(var.aval, "dtype", None)
        if dtype is not None and not _engine_has(np.dtype(dtype).name):
            raise UnsupportedPrimitiveError(
                f"spmdsim cannot run the JAX primitive '{eqn.primitive.name}' on {np.dtype(dtype).name} values at "
                f"{where(eqn)} (in the pmapped function): spmdsim's arrays have no {np.dtype(dtype).name} dtype")


def _callee(eqn):
    """The jaxpr an inlined call-like primitive calls."""
    callee = eqn.params.get(_INLINED[eqn.primitive.name])
    if callee is None:
        callee = next(v for v in eqn.params.values() if isinstance(v, (jcore.Jaxpr, jcore.ClosedJaxpr)))
    return callee


def _open(jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, jcore.ClosedJaxpr) else jaxpr


def _work(jaxpr):
    """A static count of a jaxpr's work, to choose the branch an abstract cond runs: dot_general's and
    conv_general_dilated's FLOPs and every other equation's elements written, a scan's body once per iteration,
    a while loop's once."""
    total = 0
    for eqn in jaxpr.eqns:
        name, p = eqn.primitive.name, eqn.params
        if name == "dot_general":
            (lhs_contract, _), _ = p["dimension_numbers"]
            contract = math.prod(eqn.invars[0].aval.shape[d] for d in lhs_contract)
            total += 2 * contract * math.prod(eqn.outvars[0].aval.shape)
        elif name == "conv_general_dilated":
            kernel, spec = eqn.invars[1].aval.shape, p["dimension_numbers"].rhs_spec
            contract = math.prod(kernel[d] for d in spec[1:])  # input features per group times kernel elements
            total += 2 * contract * math.prod(eqn.outvars[0].aval.shape)
        elif name == "cond":
            total += max(_work(b.jaxpr) for b in p["branches"])
        elif name == "scan":
            total += p["length"] * _work(p["jaxpr"].jaxpr)
        elif name == "while":
            total += _work(p["cond_jaxpr"].jaxpr) + _work(p["body_jaxpr"].jaxpr)
        elif name in _INLINED:
            total += _work(_open(_callee(eqn)))
        else:
            total += sum(math.prod(getattr(v.aval, "shape", ())) for v in eqn.outvars)
    return total


# JAX's GatherScatterMode as python/src/indexing.cpp reads it.
_MODES = {"CLIP": 0, "FILL_OR_DROP": 1, "PROMISE_IN_BOUNDS": 2}


def _mode(eqn):
    mode = eqn.params["mode"]
    if mode.name not in _MODES:
        raise UnsupportedPrimitiveError(f"{eqn.primitive.name} with mode {mode.name} at {where(eqn)}: spmdsim "
                                        f"runs the modes {', '.join(_MODES)}")
    return _MODES[mode.name]


def _fill_value(eqn):
    """The value a FILL_OR_DROP gather gives out of bounds: JAX's default when the user gave none."""
    fill, dtype = eqn.params["fill_value"], eqn.outvars[0].aval.dtype
    if fill is not None:
        return float(fill)
    if jnp.issubdtype(dtype, jnp.inexact):
        return float("nan")
    if dtype == jnp.bool_:
        return 1.0
    return float(jnp.iinfo(dtype).min)


def _groups(groups):
    return [list(g) for g in groups] if groups else []


def _low_and_high(padding):
    """A window's (low, high) padding pairs as the list of lows and the list of highs."""
    return [int(low) for low, _ in padding], [int(high) for _, high in padding]


def _parameters(eqn, ins, lower_callee):
    """Copies the parameters the C++ rule of eqn's primitive reads into the instruction; lower_callee(jaxpr,
    consts) lowers the programs of control flow."""
    name, p = eqn.primitive.name, eqn.params
    if name == "integer_pow":
        ins.ints = [p["y"]]
    elif name == "round":
        ins.ints = [int(p["rounding_method"])]
    elif name == "iota":
        ins.ints = [p["dimension"]]
    elif name == "dot_general":
        (lc, rc), (lb, rb) = p["dimension_numbers"]
        ins.ints, ins.ints2, ins.groups = list(lc), list(rc), [list(lb), list(rb)]
    elif name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
                  "argmax", "argmin"):
        ins.ints = list(p["axes"])
    elif name in ("cumsum", "cumprod", "cummax", "cummin"):
        ins.ints, ins.ints2 = [p["axis"]], [int(p["reverse"])]
    elif name == "broadcast_in_dim":
        ins.ints = list(p["broadcast_dimensions"])
    elif name == "rev":
        ins.ints = list(p["dimensions"])
    elif name == "transpose":
        ins.ints = list(p["permutation"])
    elif name == "reshape" and p["dimensions"] is not None:
        ins.ints = list(p["dimensions"])
    elif name == "slice":
        ins.ints, ins.ints2 = list(p["start_indices"]), list(p["limit_indices"])
        ins.groups = [list(p["strides"])] if p["strides"] else []
    elif name == "split":
        ins.ints, ins.ints2 = list(p["sizes"]), [p["axis"]]
    elif name == "concatenate":
        ins.ints = [p["dimension"]]
    elif name == "pad":
        config = p["padding_config"]
        ins.ints, ins.ints2, ins.groups = [c[0] for c in config], [c[1] for c in config], [[c[2] for c in config]]
    elif name in ("psum", "pmax", "pmin"):
        ins.axis_names = _axis_names(eqn, p["axes"])
        ins.groups = _groups(p["axis_index_groups"])
    elif name == "all_gather":
        ins.axis_names = _axis_names(eqn, p["axis_name"])
        ins.ints = [p["all_gather_dimension"], int(p["tiled"])]
        ins.groups = _groups(p["axis_index_groups"])
    elif name == "reduce_scatter":
        ins.axis_names = _axis_names(eqn, p["axis_name"])
        ins.ints = [p["scatter_dimension"], int(p["tiled"])]
        ins.groups = _groups(p["axis_index_groups"])
    elif name == "all_to_all":
        ins.axis_names = _axis_names(eqn, p["axis_name"])
        # The primitive splits and concatenates in place whatever its `tiled` (lax.all_to_all reshapes around
        # it when not tiled): spmdsim's tiled all_to_all.
        ins.ints = [p["split_axis"], p["concat_axis"], 1]
        ins.groups = _groups(p["axis_index_groups"])
    elif name == "ppermute":
        ins.axis_names = _axis_names(eqn, p["axis_name"])
        ins.groups = [list(pair) for pair in p["perm"]]
    elif name == "axis_index":
        ins.axis_names = _axis_names(eqn, p["axis_name"])
    elif name == "gather":
        d = p["dimension_numbers"]
        ins.groups = [list(d.offset_dims), list(d.collapsed_slice_dims), list(d.start_index_map),
                      list(d.operand_batching_dims), list(d.start_indices_batching_dims), list(p["slice_sizes"])]
        ins.ints = [_mode(eqn)]
        ins.number = _fill_value(eqn)
    elif name.startswith("scatter"):
        d = p["dimension_numbers"]
        ins.groups = [list(d.update_window_dims), list(d.inserted_window_dims),
                      list(d.scatter_dims_to_operand_dims), list(d.operand_batching_dims),
                      list(d.scatter_indices_batching_dims)]
        ins.ints = [_mode(eqn)]
    elif name == "sort":
        ins.ints = [p["dimension"], p["num_keys"]]
    elif name == "conv_general_dilated":
        d = p["dimension_numbers"]
        ins.groups = [list(d.lhs_spec), list(d.rhs_spec), list(d.out_spec), list(p["window_strides"]),
                      *_low_and_high(p["padding"]), list(p["lhs_dilation"]), list(p["rhs_dilation"])]
        ins.ints = [p["feature_group_count"], p["batch_group_count"]]
    elif name in ("reduce_window_max", "reduce_window_min", "reduce_window_sum"):
        ins.groups = [list(p["window_dimensions"]), list(p["window_strides"]), *_low_and_high(p["padding"]),
                      list(p["base_dilation"]), list(p["window_dilation"])]
    elif name == "select_and_scatter_add":
        select = p["select_prim"].name
        if select not in ("ge", "le"):
            raise UnsupportedPrimitiveError(f"select_and_scatter_add selecting with {select} at {where(eqn)}: "
                                            "spmdsim runs ge (max pooling) and le (min pooling)")
        ins.groups = [list(p["window_dimensions"]), list(p["window_strides"]), *_low_and_high(p["padding"])]
        ins.ints = [int(select == "ge")]
    elif name == "cond":
        branches = p["branches"]
        for branch in branches:
            ins.add_callee(lower_callee(branch.jaxpr, branch.consts))
        work = [_work(b.jaxpr) for b in branches]
        ins.ints = [work.index(max(work))]
    elif name == "while":
        for closed in (p["cond_jaxpr"], p["body_jaxpr"]):
            ins.add_callee(lower_callee(closed.jaxpr, closed.consts))
        ins.ints = [p["cond_nconsts"], p["body_nconsts"]]
    elif name == "scan":
        ins.add_callee(lower_callee(p["jaxpr"].jaxpr, p["jaxpr"].consts))
        ins.ints = [p["num_consts"], p["num_carry"], p["length"], int(p["reverse"])]


# In the encoding of a nested pmap's in_axes and out_axes: None (a jaxpr's axes are otherwise non-negative).
_UNMAPPED = -1


def axes_ints(axes):
    """pmap's in_axes or out_axes as the engine reads them (python/src/program.hpp, pmap_axes)."""
    return [_UNMAPPED if a is None else int(a) for a in axes]


class Lowering:
    """Builds one Program from a jaxpr, inlining call-like primitives. `inner_axes` collects the axes of the
    nested pmaps, (name, size) per depth of nesting below the pmap's program, outermost first; this program
    sits at `depth`."""

    def __init__(self, inner_axes, depth):
        self.program = _core.Program()
        self.inner_axes = inner_axes
        self.depth = depth

    def slot_of(self, env, atom):
        if isinstance(atom, jcore.Literal):
            return self.program.add_constant(constant(atom.val, atom.aval.dtype))
        return env[atom]

    def lower(self, jaxpr, env):
        """Lowers jaxpr's equations; env maps its input and constant variables to slots."""
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if name not in self.known and name not in _INLINED:
                raise UnsupportedPrimitiveError(
                    f"spmdsim cannot run the JAX primitive '{name}' at {where(eqn)} (in the pmapped function); "
                    f"it runs: {', '.join(self.known)}")
            _check_dtypes(eqn)
            inputs = [self.slot_of(env, v) for v in eqn.invars]
            if name in _INLINED:
                self.inline(eqn, inputs, env)
                continue
            ins = _core.Instruction()
            ins.primitive = name
            ins.where = where(eqn)
            ins.inputs = inputs
            ins.outputs = [self.program.add_slot() for _ in eqn.outvars]
            ins.in_shapes = [list(v.aval.shape) for v in eqn.invars]
            ins.out_shapes = [list(v.aval.shape) for v in eqn.outvars]
            ins.out_dtypes = [dtype_name(v.aval) for v in eqn.outvars]
            if name == "xla_pmap":
                self.nested_pmap(eqn, ins)
            else:
                _parameters(eqn, ins, self.callee)
            self.program.add(ins)
            for v, slot in zip(eqn.outvars, ins.outputs):
                env[v] = slot

    def inline(self, eqn, inputs, env):
        callee = _callee(eqn)
        inner_env = {}
        if isinstance(callee, jcore.ClosedJaxpr):
            for var, value in zip(callee.jaxpr.constvars, callee.consts):
                inner_env[var] = self.program.add_constant(constant(value, var.aval.dtype))
            callee = callee.jaxpr
        # custom_vjp/custom_jvp pass extra operands (the rule's own consts) first only when the callee takes them.
        for var, slot in zip(callee.invars, inputs[len(inputs) - len(callee.invars):]):
            inner_env[var] = slot
        self.lower(callee, inner_env)
        for outer, inner in zip(eqn.outvars, callee.outvars):
            env[outer] = self.slot_of(inner_env, inner)

    def callee(self, jaxpr, const_values):
        """The program of a jaxpr that control flow runs at this depth of nesting."""
        return lower_program(jaxpr, const_values, self.inner_axes, self.depth)

    def nested_pmap(self, eqn, ins):
        """An xla_pmap inside the program: its axis recorded at this depth, its instruction's parameters and the
        program of its jaxpr, which the instruction runs on the depth's axis."""
        p = eqn.params
        axis = (str(p["axis_name"]), int(p["axis_size"]))
        if len(self.inner_axes) == self.depth:
            self.inner_axes.append(axis)
        elif self.inner_axes[self.depth] != axis:
            declared = self.inner_axes[self.depth]
            raise UnsupportedPrimitiveError(
                f"a pmap over axis '{axis[0]}' of size {axis[1]} at {where(eqn)}, where an earlier pmap at the "
                f"same depth maps '{declared[0]}' of size {declared[1]}: spmdsim runs the pmaps of one depth of "
                "nesting over one axis")
        if p["devices"] is not None:
            raise ValueError("Nested pmap with explicit devices argument.")
        ins.axis_names = [axis[0]]
        ins.ints, ins.ints2 = axes_ints(p["in_axes"]), axes_ints(p["out_axes"])
        ins.number = axis[1]
        ins.add_callee(lower_program(p["call_jaxpr"], (), self.inner_axes, self.depth + 1))

    known = _core.primitives()


def lower_program(jaxpr, const_values=(), inner_axes=None, depth=0):
    """The Program of a jaxpr (pmap's call_jaxpr, a branch, a loop's body, a nested pmap's); its inputs are
    jaxpr's invars in order, its constants const_values. The axes of the pmaps nested in it are appended to
    `inner_axes` (name, size) per depth, outermost first; the program sits at `depth`."""
    lowering = Lowering(inner_axes if inner_axes is not None else [], depth)
    env = {}
    for var, value in zip(jaxpr.constvars, const_values):
        env[var] = lowering.program.add_constant(constant(value, var.aval.dtype))
    for var in jaxpr.invars:
        env[var] = lowering.program.add_input()
    lowering.lower(jaxpr, env)
    lowering.program.set_outputs([lowering.slot_of(env, v) for v in jaxpr.outvars])
    return lowering.program
