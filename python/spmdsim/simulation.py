"""spmdsim.Simulation: a simulated platform that runs jax.pmap functions (docs/python.md)."""
import json
import weakref

import jax
import numpy as np

from spmdsim import _core
from spmdsim.lowering import UnsupportedPrimitiveError, axes_ints, lower_program


def _is_static(arg):
    """A positional argument that is no array (a Python number, string, None or a tuple of them): pmap's
    static_broadcasted_argnums take only such, and tracing them as constants gives pmap's result either way."""
    leaves = jax.tree_util.tree_leaves(arg)
    return all(isinstance(x, (bool, int, float, complex, str)) for x in leaves) and not isinstance(
        arg, (list, dict))


def _spec(leaf):
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return ("abstract", tuple(leaf.shape), np.dtype(leaf.dtype).name)
    a = np.asarray(leaf)
    return ("array", a.shape, a.dtype.name, getattr(leaf, "weak_type", False))


class _Traced:
    """One traced signature of a pmapped function: its pmap parameters and lowered program."""

    def __init__(self, fn, args, static):
        traced = jax.make_jaxpr(fn, static_argnums=static, return_shape=True)
        closed, self.out_shape = traced(*args)
        self.out_tree = jax.tree_util.tree_structure(self.out_shape)
        jaxpr = closed.jaxpr
        if len(jaxpr.eqns) != 1 or jaxpr.eqns[0].primitive.name != "xla_pmap":
            names = ", ".join(e.primitive.name for e in jaxpr.eqns) or "none"
            raise TypeError(
                "sim.run expects a function made by jax.pmap (one xla_pmap in its trace); its trace has: " + names)
        eqn = jaxpr.eqns[0]
        p = eqn.params
        self.axis_name = str(p["axis_name"])
        self.axis_size = int(p["axis_size"])
        self.in_axes = axes_ints(p["in_axes"])
        self.out_axes = axes_ints(p["out_axes"])
        self.donated = [i for i, donated in enumerate(p["donated_invars"]) if donated]  # donate_argnums' leaves
        self.devices = [d.id for d in p["devices"]] if p["devices"] is not None else None
        self.name = p["name"]
        self.inner_axes = []  # the nested pmaps' axes, which the call takes devices for before it starts
        self.program = lower_program(p["call_jaxpr"], inner_axes=self.inner_axes)
        # Where each pmap operand comes from: an argument leaf, a constant of the trace, or a literal.
        self.consts = dict(zip(jaxpr.constvars, closed.consts))
        self.arg_index = {v: i for i, v in enumerate(jaxpr.invars)}
        self.operands = eqn.invars
        self.results = {v: i for i, v in enumerate(eqn.outvars)}
        self.outvars = jaxpr.outvars


class Simulation:
    """A simulated platform, chosen as the command line chooses it (docs/collectives.md, the platform options):

    preset     a device (a100, h100, ...) on `topology`, or a whole node (dgx_h100, ...) or TPU slice
    devices    how many devices (default: the node's or slice's, or 8 on a topology)
    topology   switch, ring, torus[:XxY], ... for a device preset (default: switch)
    nodes      with a node preset: this many nodes
    platform   a SimGrid XML platform file (docs/platforms.md)
    hostfile   with platform: an SMPI hostfile (smpirun -hostfile), device i the host on its i-th line
    host_cpu   with platform: the host that runs the host program (default: the one marked spmdsim.role=host)
    cfg        SimGrid settings, ["network/model:LV08", ...], over the platform's own network model
    algorithms {"all_reduce": "ring", ...}: the algorithm of each collective kind ("auto": the fastest)
    protocol   nccl_ring's NCCL protocol on an NVIDIA node preset: "LL", "LL128" or "Simple" (default: the
               one NCCL's tuner picks for each call's size; docs/collectives.md#protocols); RCCL's on
               mi300x_8gpu: "LL" or "Simple" (docs/collectives.md#rccl)
    fusion     True (default): elementwise ops, broadcasts and reductions that XLA fuses run as one kernel
               each (docs/python.md#fusion); False: every primitive is its own kernel, the unfused cost
    aggregate  True: each ring phase of a collective on shapes only (abstract runs) moves as one transfer each
               way plus the other messages' latencies, as `spmdsim train --aggregate` runs it: the same times
               under the alpha-beta model, for large device counts (docs/performance.md#aggregated-phases)
    trace_once True (default): an abstract run's program runs once and every device replays it, as JAX
               traces a pmapped function once: the same times and memory for far less work at many devices
               (docs/scale.md; a program that reads axis_index runs on every device); False: every device
               runs it

    SimGrid has one engine per process: make one Simulation per process. Consecutive run() calls are one
    timeline.
    """

    def __init__(self, preset=None, devices=None, topology=None, nodes=None, platform=None, hostfile=None,
                 host_cpu=None, cfg=(), algorithms=None, protocol=None, fusion=True, aggregate=False,
                 trace_once=True):
        for name, value in (("fusion", fusion), ("aggregate", aggregate), ("trace_once", trace_once)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        self._sim = _core.Simulation(preset or "", int(devices or 0), topology or "", str(nodes or ""),
                                     str(platform or ""), str(hostfile or ""), host_cpu or "", list(cfg),
                                     dict(algorithms or {}), protocol or "", fusion, aggregate)
        self._trace_once = trace_once
        self._traced = {}
        # The arrays sim.run returned whose values are still on the devices, as jax.Arrays stay: id of the
        # (read-only) numpy array -> (a weak reference to it, its device-resident array in the engine).
        self._on_devices = {}

    @property
    def num_devices(self):
        return self._sim.num_devices

    @property
    def platform(self):
        return self._sim.platform

    @property
    def now(self):
        """Simulated seconds so far."""
        return self._sim.now

    def run(self, fn, *args):
        """Runs fn (a jax.pmap function) on the simulated devices; returns what fn(*args) returns, as read-only
        numpy arrays whose values stay on the devices, as a jax.Array's do: passed to a later run they travel
        no more, and device_get reads them back. With jax.ShapeDtypeStruct leaves the run is abstract (costs
        and sizes only) and returns jax.ShapeDtypeStruct leaves."""
        static = tuple(i for i, a in enumerate(args) if _is_static(a))
        leaves, treedef = jax.tree_util.tree_flatten(
            tuple(a for i, a in enumerate(args) if i not in static))
        key = (fn, treedef, tuple(_spec(x) for x in leaves), tuple((i, args[i]) for i in static))
        traced = self._traced.get(key)
        if traced is None:
            traced = self._traced[key] = _Traced(fn, args, static)
        abstract = any(isinstance(x, jax.ShapeDtypeStruct) for x in leaves)
        operands = [self._operand(traced, v, leaves, abstract) for v in traced.operands]
        out = self._sim.run_pmap(traced.program, operands, traced.in_axes, traced.out_axes, traced.axis_name,
                                 traced.axis_size, traced.devices, traced.name, traced.inner_axes,
                                 traced.donated, self._trace_once)
        if abstract:
            return traced.out_shape
        results = []
        for v in traced.outvars:
            if v in traced.results:
                on_devices = out[traced.results[v]]
                result = np.asarray(on_devices.values(), dtype=v.aval.dtype)
                result.flags.writeable = False  # a jax.Array is immutable: its devices' copy stays its value
                self._remember_on_devices(result, on_devices)
                results.append(result)
            else:
                results.append(np.asarray(self._host_value(traced, v, leaves), dtype=v.aval.dtype))
        return jax.tree_util.tree_unflatten(traced.out_tree, results)

    def device_get(self, tree):
        """jax.device_get: the host reads the arrays of `tree` that sim.run left on the devices (their transfer
        device->host in simulated time, once per array); returns the tree as numpy arrays."""
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        on_devices = [a for a in (self._on_devices_array(leaf) for leaf in leaves) if a is not None]
        if on_devices:
            self._sim.read_back(on_devices)
        return jax.tree_util.tree_unflatten(treedef, [np.array(leaf) for leaf in leaves])

    def _remember_on_devices(self, result, on_devices):
        key = id(result)
        forget = self._on_devices.pop
        self._on_devices[key] = (weakref.ref(result, lambda _: forget(key, None)), on_devices)

    def _on_devices_array(self, leaf):
        """The engine's device-resident array of a numpy array sim.run returned, or None."""
        entry = self._on_devices.get(id(leaf))
        return entry[1] if entry is not None and entry[0]() is leaf else None

    def _host_value(self, traced, var, leaves):
        if hasattr(var, "val"):
            return var.val
        if var in traced.consts:
            return traced.consts[var]
        return leaves[traced.arg_index[var]]

    def _operand(self, traced, var, leaves, abstract):
        dtype = np.dtype(var.aval.dtype).name
        if abstract and not hasattr(var, "val") and var not in traced.consts:
            return _core.abstract(list(var.aval.shape), dtype)
        value = self._host_value(traced, var, leaves)
        on_devices = self._on_devices_array(value)
        if on_devices is not None and on_devices.dtype == dtype and list(on_devices.shape) == list(var.aval.shape):
            return on_devices
        return _core.array(np.asarray(value, dtype=np.float64), dtype)

    def report_table(self):
        """The report as a table: times per call and device, memory by tag."""
        return self._sim.report_table()

    def report(self, details=True):
        """The JSON report (with its schema version) as a dict. details=False leaves its spans and memory
        timelines empty: the summary (times and peaks per call and device) of a run of thousands of devices."""
        return json.loads(self._sim.report_json(bool(details)))

    def write_trace(self, path):
        """Writes the Chrome / Perfetto trace of everything so far to `path`."""
        self._sim.write_trace(str(path))


__all__ = ["Simulation", "UnsupportedPrimitiveError"]
