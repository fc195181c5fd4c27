#include "fixture.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "spmdsim/dtype.hpp"

namespace spmdsim::testing {
namespace {

using nlohmann::json;

// Errors while reading one fixture; load_fixture adds the file's name.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void expect_kind(const json& node, bool ok, std::string_view what, std::string_view where) {
  if (!ok) throw FormatError(fmt::format("{}: expected {}, got {}", where, what, node.dump()));
}

// The one key of a tagged node ({"array": ...}, {"tuple": [...]}, ...).
std::pair<std::string, const json*> tag_of(const json& node, std::string_view where) {
  expect_kind(node, node.is_object() && node.size() == 1, "a node with one tag", where);
  return {node.begin().key(), &node.begin().value()};
}

void expect_keys(const json& node, const std::set<std::string>& required,
                 const std::set<std::string>& optional, std::string_view where) {
  expect_kind(node, node.is_object(), "an object", where);
  for (const auto& key : required)
    if (!node.contains(key)) throw FormatError(fmt::format("{}: missing key '{}'", where, key));
  for (const auto& [key, value] : node.items())
    if (!required.contains(key) && !optional.contains(key))
      throw FormatError(fmt::format("{}: unknown key '{}'", where, key));
}

Array array_from_json(const json& node, std::string_view where) {
  expect_keys(node, {"dtype", "shape", "data"}, {}, where);
  const DType dtype = parse_dtype(node.at("dtype").get<std::string>());
  const Shape shape = node.at("shape").get<Shape>();
  const json& data = node.at("data");
  expect_kind(data, data.is_array(), "a flat data list", where);
  std::vector<double> values;
  values.reserve(data.size());
  // float32 data are the exact doubles of the float32 values, so the conversion back is exact.
  for (const auto& v : data) values.push_back(v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
  if (static_cast<std::int64_t>(values.size()) != num_elements(shape))
    throw FormatError(fmt::format("{}: {} values for shape {}", where, values.size(), shape_str(shape)));
  return Array::from_values(shape, values, dtype);
}

Tree tree_from_json(const json& node, const std::string& where) {
  const auto [tag, body] = tag_of(node, where);
  if (tag == "array") return array_from_json(*body, where);
  if (tag == "none") return Tree();
  if (tag == "tuple" || tag == "list") {
    expect_kind(*body, body->is_array(), "a list of trees", where);
    std::vector<Tree> items;
    for (std::size_t i = 0; i < body->size(); ++i)
      items.push_back(tree_from_json(body->at(i), fmt::format("{}[{}]", where, i)));
    return tag == "tuple" ? Tree::tuple(std::move(items)) : Tree::list(std::move(items));
  }
  if (tag == "dict") {
    expect_kind(*body, body->is_object(), "an object of trees", where);
    std::map<std::string, Tree> items;
    for (const auto& [key, value] : body->items())
      items.emplace(key, tree_from_json(value, fmt::format("{}['{}']", where, key)));
    return Tree::dict(std::move(items));
  }
  throw FormatError(fmt::format("{}: unknown tree tag '{}'", where, tag));
}

// A positional argument: a tree, or {"static": value}.
Arg arg_from_json(const json& node, const std::string& where) {
  const auto [tag, body] = tag_of(node, where);
  if (tag != "static") return Arg(tree_from_json(node, where));
  if (body->is_boolean()) return Arg(body->get<bool>());
  if (body->is_number_integer()) return Arg(body->get<std::int64_t>());
  if (body->is_number_float()) return Arg(body->get<double>());
  if (body->is_string()) return Arg(body->get<std::string>());
  throw FormatError(fmt::format("{}: unsupported static value {}", where, body->dump()));
}

// in_axes / out_axes: bare ints and nulls are leaves, containers are tagged.
Axes axes_from_json(const json& node, const std::string& where) {
  if (node.is_null()) return Axes(none);
  if (node.is_number_integer()) return Axes(Axis(node.get<int>()));
  const auto [tag, body] = tag_of(node, where);
  if (tag == "tuple" || tag == "list") {
    expect_kind(*body, body->is_array(), "a list of axis specs", where);
    std::vector<Axes> items;
    for (std::size_t i = 0; i < body->size(); ++i)
      items.push_back(axes_from_json(body->at(i), fmt::format("{}[{}]", where, i)));
    return tag == "tuple" ? Axes::tuple(std::move(items)) : Axes::list(std::move(items));
  }
  if (tag == "dict") {
    expect_kind(*body, body->is_object(), "an object of axis specs", where);
    std::map<std::string, Axes> items;
    for (const auto& [key, value] : body->items())
      items.emplace(key, axes_from_json(value, fmt::format("{}['{}']", where, key)));
    return Axes::dict(std::move(items));
  }
  throw FormatError(fmt::format("{}: unknown axis spec tag '{}'", where, tag));
}

template <class T>
void read_optional(const json& params, const char* key, std::optional<T>& out) {
  if (params.contains(key) && !params.at(key).is_null()) out = params.at(key).get<T>();
}

// perm is [[source, destination], ...] for ppermute and [source of device 0, ...] for pshuffle.
void read_perm(const json& perm, FixtureParams& out) {
  expect_kind(perm, perm.is_array() && !perm.empty(), "a non-empty perm list", "params.perm");
  if (perm.front().is_array())
    out.ppermute_perm = perm.get<std::vector<std::pair<int, int>>>();
  else
    out.pshuffle_perm = perm.get<std::vector<int>>();
}

FixtureParams params_from_json(const json& node) {
  expect_keys(node, {"axis_name"},
              {"devices",
               "in_axes",
               "out_axes",
               "static_broadcasted_argnums",
               "axis_size",
               "arg_names",
               "inner",
               "inner_called",
               "x64",
               "op",
               "collective_axis_name",
               "collective_axis_names",
               "axis",
               "tiled",
               "scatter_dimension",
               "split_axis",
               "concat_axis",
               "groups",
               "perm",
               "available_devices",
               "mapped_size",
               "static_value",
               "layer_sizes",
               "activation"},
              "params");
  FixtureParams p;
  read_optional(node, "axis_name", p.axis_name);
  read_optional(node, "devices", p.devices);
  // in_axes / out_axes: null is a value (None), not an absent key.
  if (node.contains("in_axes")) p.in_axes = axes_from_json(node.at("in_axes"), "params.in_axes");
  if (node.contains("out_axes")) p.out_axes = axes_from_json(node.at("out_axes"), "params.out_axes");
  if (node.contains("static_broadcasted_argnums"))
    p.static_broadcasted_argnums = node.at("static_broadcasted_argnums").get<std::vector<int>>();
  read_optional(node, "axis_size", p.axis_size);
  if (node.contains("arg_names")) p.arg_names = node.at("arg_names").get<std::vector<std::string>>();
  read_optional(node, "op", p.op);
  read_optional(node, "collective_axis_name", p.collective_axis_name);
  if (node.contains("collective_axis_names"))
    p.collective_axis_names = node.at("collective_axis_names").get<std::vector<std::string>>();
  if (node.contains("inner"))
    for (const json& inner : node.at("inner")) p.inner.push_back(params_from_json(inner));
  if (node.contains("inner_called"))
    for (const json& inner : node.at("inner_called")) p.inner_called.push_back(params_from_json(inner));
  if (node.contains("x64")) p.x64 = node.at("x64").get<bool>();
  read_optional(node, "axis", p.axis);
  read_optional(node, "tiled", p.tiled);
  read_optional(node, "scatter_dimension", p.scatter_dimension);
  read_optional(node, "split_axis", p.split_axis);
  read_optional(node, "concat_axis", p.concat_axis);
  if (node.contains("groups")) p.groups = node.at("groups").get<AxisIndexGroups>();
  if (node.contains("perm")) read_perm(node.at("perm"), p);
  read_optional(node, "available_devices", p.available_devices);
  read_optional(node, "mapped_size", p.mapped_size);
  read_optional(node, "static_value", p.static_value);
  if (node.contains("layer_sizes")) p.layer_sizes = node.at("layer_sizes").get<std::vector<int>>();
  read_optional(node, "activation", p.activation);
  return p;
}

FixtureCase case_from_json(const json& node) {
  expect_keys(node, {"case", "jax_version", "num_devices", "description", "params", "inputs"},
              {"outputs", "error"}, "fixture");
  if (node.contains("outputs") == node.contains("error"))
    throw FormatError("fixture: needs exactly one of 'outputs' and 'error'");
  FixtureCase c;
  c.name = node.at("case").get<std::string>();
  c.jax_version = node.at("jax_version").get<std::string>();
  c.num_devices = node.at("num_devices").get<int>();
  c.description = node.at("description").get<std::string>();
  c.params = params_from_json(node.at("params"));
  const json& inputs = node.at("inputs");
  expect_kind(inputs, inputs.is_array(), "a list of arguments", "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    c.inputs.push_back(arg_from_json(inputs.at(i), fmt::format("inputs[{}]", i)));
  if (node.contains("outputs")) c.outputs = tree_from_json(node.at("outputs"), "outputs");
  if (node.contains("error")) {
    const json& error = node.at("error");
    expect_keys(error, {"type", "message"}, {}, "error");
    c.error = FixtureError{error.at("type").get<std::string>(), error.at("message").get<std::string>()};
  }
  return c;
}

}  // namespace

std::vector<std::string> fixture_case_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

FixtureCase load_fixture(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("cannot open fixture {}", file.string()));
  try {
    FixtureCase c = case_from_json(json::parse(in));
    if (c.name != file.stem().string())
      throw FormatError(fmt::format("case '{}' is stored under another name", c.name));
    return c;
  } catch (const std::exception& e) {  // FormatError, json's parse and type errors, parse_dtype's
    throw std::runtime_error(fmt::format("fixture {}: {}", file.filename().string(), e.what()));
  }
}

std::string case_category(std::string_view case_name) {
  static const std::regex device_count(R"(_p\d+(_of_\d+)?$)");
  const std::string name = std::regex_replace(std::string(case_name), device_count, "");
  for (std::string_view own : {"pmap_", "seed_", "error_"})
    if (name.starts_with(own)) return name;
  static const std::regex first_variant(
      R"(_((axis|dim|split)\d+|groups|int32|scalar|tree|ring|partial|swap|reverse|rotate|dtype|ij|ji|i|j|\d+x\d+)(_|$))");
  // A nested case's category keeps its prefix: nested_groups_ij_... is nested_groups.
  constexpr std::string_view nested = "nested_";
  const std::size_t from = name.starts_with(nested) ? nested.size() : 0;
  std::smatch match;
  if (std::regex_search(name.cbegin() + static_cast<std::ptrdiff_t>(from), name.cend(), match, first_variant))
    return name.substr(0, from + static_cast<std::size_t>(match.position(0)));
  return name;
}

PmapOptions pmap_options(const FixtureParams& params, std::string name) {
  PmapOptions options;
  if (params.in_axes) options.in_axes = *params.in_axes;
  if (params.out_axes) options.out_axes = *params.out_axes;
  options.axis_name = params.axis_name;
  options.static_broadcasted_argnums = params.static_broadcasted_argnums;
  if (params.devices) {
    std::vector<int> first_n(static_cast<std::size_t>(*params.devices));
    std::iota(first_n.begin(), first_n.end(), 0);
    options.devices = std::move(first_n);
  }
  options.axis_size = params.axis_size;
  options.name = std::move(name);
  options.arg_names = params.arg_names;
  for (const FixtureParams& inner : params.inner_called)
    options.inner_axes.push_back({inner.axis_name, inner.mapped_size.value_or(1)});
  return options;
}

}  // namespace spmdsim::testing
