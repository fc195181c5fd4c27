// pmap with jax.pmap's semantics: in_axes / out_axes (prefix trees of int or None), static broadcast
// arguments, a subset of devices and an axis name for collectives. Each device runs the function as its
// own SimGrid actor; inputs travel host->device over the host links, results stay on the devices until
// the host reads them (Simulation::device_get).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "spmdsim/pytree.hpp"

namespace spmdsim {

class Simulation;

// A static argument (static_broadcasted_argnums), or a Python scalar where JAX would make it an array.
using StaticValue = std::variant<bool, std::int64_t, double, std::string>;

// One positional argument of a pmapped function: a tree of arrays or a static value.
class Arg {
 public:
  Arg(Tree tree) : value_(std::move(tree)) {}
  Arg(Array array) : value_(Tree(std::move(array))) {}
  Arg(NoneType) : value_(Tree()) {}
  Arg(int v) : value_(StaticValue(std::int64_t{v})) {}
  Arg(std::int64_t v) : value_(StaticValue(v)) {}
  Arg(double v) : value_(StaticValue(v)) {}
  Arg(bool v) : value_(StaticValue(v)) {}
  Arg(const char* v) : value_(StaticValue(std::string(v))) {}
  Arg(std::string v) : value_(StaticValue(std::move(v))) {}

  bool is_static() const { return std::holds_alternative<StaticValue>(value_); }
  const Tree& tree() const;
  // The argument as one array (throws TypeError if it is a container).
  const Array& array() const;
  const StaticValue& static_value() const;
  std::int64_t as_int() const;
  double as_double() const;
  bool as_bool() const;
  const std::string& as_string() const;

 private:
  std::variant<Tree, StaticValue> value_;
};

using Args = std::vector<Arg>;
// Takes its arguments by value, so that a function can let go of donated ones (PmapOptions::donate_argnums)
// before it returns; a function taking `const Args&` fits too.
using DeviceFunction = std::function<Tree(Args)>;

// The axis of a pmap that the function calls while it runs (JAX's nesting written in the body,
// pmap(lambda x: pmap(g, axis_name='j')(x * 2) + 1, axis_name='i')). JAX traces the whole function before it
// picks the devices, so it knows the inner pmap's size; spmdsim runs the function as it goes and is told.
struct InnerAxis {
  std::optional<std::string> name;  // the inner pmap's axis_name
  std::int64_t size = 1;            // the inner pmap's mapped size
};

struct PmapOptions {
  // An int or None for every argument, or a tuple with one prefix tree per positional argument.
  Axes in_axes = Axes(0);
  // An int or None for every output, or a prefix tree of the output.
  Axes out_axes = Axes(0);
  std::optional<std::string> axis_name;
  std::vector<int> static_broadcasted_argnums;
  // Positional arguments whose buffers the call takes over, as jax.pmap's donate_argnums: each device's
  // buffers of them are held by the function's arguments alone, so they are released as soon as the function
  // lets go of them (an update can free each old leaf as its new one is made, instead of holding both). A
  // donated device-resident array is deleted: reading it is JAX's RuntimeError, passing it again its
  // ValueError. Positions past the last argument are ignored, as JAX ignores them; the outermost pmap's alone
  // apply.
  std::vector<int> donate_argnums;
  // Global device indices; by default the first axis-size devices.
  std::optional<std::vector<int>> devices;
  // The number of devices when no argument is mapped.
  std::optional<std::int64_t> axis_size;
  // The call's name in reports and traces.
  std::string name = "pmap";
  // Parameter names of the function, for messages ("argument x" rather than "args[0]"), as JAX gets them
  // from the Python signature.
  std::vector<std::string> arg_names;
  // The pmaps the function calls while it runs, outermost first (one per level of nesting). The call takes
  // the product of all the axes' sizes in devices, as XLA counts the replicas: what the function computes
  // outside an inner pmap runs on every device of the inner axes alike (replicated, as XLA runs it), and each
  // inner pmap's results reach all of them. An inner pmap whose name or size differs from its declared axis
  // is a ValueError at its call.
  std::vector<InnerAxis> inner_axes;
  // The function's promise that every device runs the same program: its ops and collectives depend on its
  // arguments' shapes alone, and what it does per device goes through device_effect. A call on abstract
  // arguments may then run the function once and have every device replay what it did (the same buffers,
  // compute and collectives, each device its own), with the same times and memory as running it on every
  // device, for a fraction of the simulator's work at thousands of devices (docs/scale.md). Where a call
  // cannot be replayed (arrays with values, nested pmaps, devices of different specs) or its function does
  // what only one device can (axis_index, a collective other than psum, pmean, pmax and pmin, an
  // asynchronous collective, reading the device's memory outside device_effect), every device runs it.
  bool trace_once = false;
};

// Inside a pmapped function: fn(the device's index along the call's axis), at once; in a call replayed
// from one run of its function (PmapOptions::trace_once), on each device at the same point of its replay.
// What a function does per device beyond its ops and collectives (a per-device memory snapshot) goes here.
void device_effect(const std::function<void(int axis_index)>& fn);

class PmappedFunction {
 public:
  PmappedFunction(DeviceFunction fn, PmapOptions options);
  // A pmap of a pmap, jax.pmap(jax.pmap(f, axis_name='j'), axis_name='i'): two named axes, the inner one
  // splitting each outer device's slice over devices of its own, a * b devices in all (device i * b + j holds
  // outer index i, inner index j). f's collectives name either axis or both ({"i", "j"}); the inner pmap's
  // results reach every device of its group (an all_gather along the inner axis) and the outer pmap stacks
  // them. The inner pmap may not pass `devices` (JAX's "Nested pmap with explicit devices argument.") nor
  // None in out_axes; both are refused before the simulation starts, as is every other JAX error of the
  // inner pmap's arguments. A pmap called inside a running function is the other form of nesting: see
  // PmapOptions::inner_axes.
  PmappedFunction(PmappedFunction inner, PmapOptions options);
  // Runs the call on `sim`'s devices; returns the outputs (device-resident, readable on the host). Called
  // inside a pmapped function, it is the inner pmap of PmapOptions::inner_axes (as the overload below).
  Tree operator()(Simulation& sim, const Args& args) const;
  // Inside a pmapped function only: runs as the next of the call's declared inner axes on the calling
  // device's group along it; returns the results stacked over that axis, on every device of the group.
  // Called where no inner axis was declared, raises NotImplementedError naming PmapOptions::inner_axes.
  Tree operator()(const Args& args) const;
  // The outermost pmap's options.
  const PmapOptions& options() const { return levels_.front(); }

 private:
  DeviceFunction fn_;                // the innermost function
  std::vector<PmapOptions> levels_;  // one per nested pmap, outermost first
};

PmappedFunction pmap(DeviceFunction fn, PmapOptions options = {});
PmappedFunction pmap(PmappedFunction inner, PmapOptions options = {});

}  // namespace spmdsim
