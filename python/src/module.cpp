// spmdsim._core: the bindings the Python package (python/spmdsim/) is written over: a Simulation on the
// command line's platform choices, arrays to and from numpy, the lowered program (program.hpp) and pmap.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/command_line.hpp"
#include "common/platform_options.hpp"
#include "common/simulation_start.hpp"
#include "program.hpp"
#include "rule_support.hpp"
#include "spmdsim/collective_algorithms.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/memory.hpp"
#include "spmdsim/report_writers.hpp"
#include "spmdsim/simulation.hpp"

namespace py = pybind11;

// A Shape (an inline vector, dtype.hpp) to and from a Python list or tuple of ints, as pybind11 converts a
// std::vector.
template <>
struct pybind11::detail::type_caster<spmdsim::Shape> : list_caster<spmdsim::Shape, std::int64_t> {};

namespace spmdsim::python {
namespace {

// The devices a device preset's topology gets when the caller names no count (the demo's).
constexpr int kDefaultDevices = 8;

std::unique_ptr<Simulation> make_simulation(const std::string& preset, int devices,
                                            const std::string& topology, const std::string& nodes,
                                            const std::string& platform_file, const std::string& hostfile,
                                            const std::string& host_cpu, const std::vector<std::string>& cfg,
                                            const std::map<std::string, std::string>& algorithms,
                                            const std::string& protocol, bool fusion, bool aggregate) {
  const cli::PlatformRequest request{.topology = topology,
                                     .preset = preset,
                                     .platform_file = platform_file,
                                     .nodes = nodes,
                                     .hostfile = hostfile,
                                     .host_cpu = host_cpu};
  auto chosen = cli::choose_platform(request, devices > 0 ? devices : 1);
  if (devices == 0 && !chosen.topology.empty()) chosen = cli::choose_platform(request, kDefaultDevices);
  SimulationOptions options;
  for (const auto& [kind, name] : algorithms) {
    const auto k = parse_collective_kind(kind);
    check_algorithm(k, name);
    options.algorithms[k] = name;
  }
  // Checked before the engine starts: a process has one.
  const auto names = nccl_protocol_names();
  if (!protocol.empty() && std::find(names.begin(), names.end(), protocol) == names.end())
    throw ValueError(fmt::format("protocol '{}' is not one of NCCL's: {}", protocol, fmt::join(names, ", ")));
  options.protocol = protocol;
  options.fusion = fusion;
  options.aggregate_ring_phases = aggregate;
  std::vector<std::string> argv{"spmdsim"};
  for (const auto& setting : cfg) argv.push_back("--cfg=" + setting);
  return cli::start_simulation(chosen, argv, devices, std::move(options));
}

Array array_from(const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
                 const std::string& dtype) {
  Shape shape(values.shape(), values.shape() + values.ndim());
  return Array::from_values(shape, std::vector<double>(values.data(), values.data() + values.size()),
                            parse_dtype(dtype));
}

py::array_t<double> values_of(const Array& a) {
  if (a.is_abstract()) throw ValueError("an abstract array has no values");
  const auto values = a.to_doubles();
  py::array_t<double> out(a.shape());
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// One pmap call of `program`; its outputs stay on the devices (device-resident arrays, readable without a
// transfer in simulated time), as a jax.Array does until the host reads it (read_back).
// `inner_axes`: the nested pmaps' (axis name, size) per depth, outermost first. `donated`: the arguments
// (leaves) pmap's donate_argnums gives the call, released on each device after their last use. `trace_once`:
// PmapOptions::trace_once.
std::vector<Array> run_pmap(Simulation& sim, std::shared_ptr<Program> program, const std::vector<Array>& args,
                            const std::vector<std::int64_t>& in_axes,
                            const std::vector<std::int64_t>& out_axes, const std::string& axis_name,
                            std::int64_t axis_size, const std::optional<std::vector<int>>& devices,
                            const std::string& name,
                            const std::vector<std::pair<std::string, std::int64_t>>& inner_axes,
                            const std::vector<int>& donated, bool trace_once) {
  PmapOptions options{.in_axes = pmap_axes(in_axes),
                      .out_axes = pmap_axes(out_axes),
                      .axis_name = axis_name,
                      .donate_argnums = donated,
                      .devices = devices,
                      .axis_size = axis_size,
                      .name = name,
                      .trace_once = trace_once};
  for (const auto& [inner_name, size] : inner_axes) options.inner_axes.push_back({inner_name, size});
  const auto pmapped = pmap([program](Args a) { return program->run(std::move(a)); }, std::move(options));
  const Args call_args(args.begin(), args.end());
  Tree out;
  {
    py::gil_scoped_release release;  // the simulation runs no Python
    const AbstractRun abstract_run(any_abstract(args));
    out = pmapped(sim, call_args);
  }
  return out.leaves();
}

// The host reads `arrays` (jax.device_get): the shards of those still on the devices travel device->host.
void read_back(Simulation& sim, const std::vector<Array>& arrays) {
  std::vector<Tree> leaves(arrays.begin(), arrays.end());
  py::gil_scoped_release release;
  sim.device_get(Tree::tuple(std::move(leaves)));
}

std::string report_table(const Simulation& sim) {
  std::ostringstream out;
  write_report_table(out, sim.report());
  return out.str();
}

// The JSON report; without `details`, its spans and memory timelines left empty: the summary of a run of
// thousands of devices, whose spans number millions.
std::string report_json(const Simulation& sim, bool details) {
  SimulationReport report = sim.report();
  if (!details) {
    for (auto& call : report.calls)
      for (auto& spans : call.spans) spans = {};
    report.memory_timelines.clear();
  }
  return report_to_json(report).dump();
}

void write_trace(const Simulation& sim, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw ValueError(fmt::format("cannot write the trace to '{}'", path));
  write_chrome_trace(out, sim.report());
}

}  // namespace
}  // namespace spmdsim::python

PYBIND11_MODULE(_core, m) {
  using namespace spmdsim;
  using namespace spmdsim::python;
  m.doc() = "spmdsim's engine, for the spmdsim Python package";
  py::register_exception<ValueError>(m, "SpmdsimValueError", PyExc_ValueError);
  py::register_exception<TypeError>(m, "SpmdsimTypeError", PyExc_TypeError);
  py::register_exception<NameError>(m, "SpmdsimNameError", PyExc_NameError);
  py::register_exception<IndexError>(m, "SpmdsimIndexError", PyExc_IndexError);
  py::register_exception<cli::UsageError>(m, "SpmdsimUsageError", PyExc_ValueError);
  py::register_exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_MemoryError);

  py::class_<Array>(m, "Array")
      .def_property_readonly("shape", [](const Array& a) { return a.shape(); })
      .def_property_readonly("dtype", [](const Array& a) { return std::string(dtype_name(a.dtype())); })
      .def_property_readonly("is_abstract", &Array::is_abstract)
      .def("values", &values_of);
  m.def("array", &array_from, py::arg("values"), py::arg("dtype"));
  m.def("abstract", [](const Shape& shape, const std::string& dtype) {
    return Array::abstract(shape, parse_dtype(dtype));
  });

  py::class_<Instruction>(m, "Instruction")
      .def(py::init<>())
      .def_readwrite("primitive", &Instruction::primitive)
      .def_readwrite("where", &Instruction::where)
      .def_readwrite("inputs", &Instruction::inputs)
      .def_readwrite("outputs", &Instruction::outputs)
      .def_readwrite("in_shapes", &Instruction::in_shapes)
      .def_readwrite("out_shapes", &Instruction::out_shapes)
      .def_property(
          "out_dtypes", [](const Instruction& i) { return i.out_dtypes; },
          [](Instruction& i, const std::vector<std::string>& names) {
            i.out_dtypes.clear();
            for (const auto& n : names) i.out_dtypes.push_back(parse_dtype(n));
          })
      .def_readwrite("ints", &Instruction::ints)
      .def_readwrite("ints2", &Instruction::ints2)
      .def_readwrite("groups", &Instruction::groups)
      .def_readwrite("number", &Instruction::number)
      .def_readwrite("axis_names", &Instruction::axis_names)
      .def("add_callee",
           [](Instruction& i, std::shared_ptr<Program> program) { i.callees.push_back(std::move(program)); });
  py::class_<DType>(m, "DType");

  py::class_<Program, std::shared_ptr<Program>>(m, "Program")
      .def(py::init<>())
      .def("add_input", &Program::add_input)
      .def("add_constant", &Program::add_constant)
      .def("add_slot", &Program::add_slot)
      .def("add", &Program::add)
      .def("set_outputs", &Program::set_outputs)
      .def("__len__", &Program::size);
  m.def("primitives", &rule_names);

  py::class_<Simulation>(m, "Simulation")
      .def(py::init(&make_simulation), py::arg("preset"), py::arg("devices"), py::arg("topology"),
           py::arg("nodes"), py::arg("platform"), py::arg("hostfile"), py::arg("host_cpu"), py::arg("cfg"),
           py::arg("algorithms"), py::arg("protocol"), py::arg("fusion"), py::arg("aggregate"))
      .def_property_readonly("num_devices", &Simulation::num_devices)
      .def_property_readonly("platform", [](const Simulation& s) { return s.platform().description; })
      .def_property_readonly("now", &Simulation::now)
      .def("run_pmap", &run_pmap)
      .def("read_back", &read_back)
      .def("report_table", &report_table)
      .def("report_json", &report_json)
      .def("write_trace", &write_trace);
}
