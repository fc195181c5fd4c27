// The JAX reference fixtures (tests/reference/fixtures/*.json, format in tests/reference/README.md) read
// into spmdsim values: inputs as Args, outputs as a Tree, params as a typed struct, pmap's options as
// PmapOptions. Reading is strict: an unknown key or a malformed node is an error naming the file and the
// place, so a change in the fixture format cannot pass unnoticed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/pytree.hpp"

namespace spmdsim::testing {

// The fixtures were made with this many CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=8).
inline constexpr int kJaxDeviceCount = 8;

// A case's params: how pmap was called, what the case's function passed to its collective, and a few
// descriptive fields. Absent keys stay empty.
struct FixtureParams {
  // pmap's own arguments.
  std::optional<std::string> axis_name;  // null: pmap got no axis_name
  std::optional<int> devices;            // devices=jax.devices()[:n]; null: the argument was not passed
  std::optional<Axes> in_axes;           // absent: pmap's default 0
  std::optional<Axes> out_axes;          // absent: pmap's default 0
  std::vector<int> static_broadcasted_argnums;
  std::optional<std::int64_t> axis_size;
  std::vector<std::string> arg_names;  // the Python function's parameters, which JAX's messages quote
  std::vector<FixtureParams> inner;    // nested pmaps' own arguments, outermost first
  // The pmaps the function calls in its body (axis_name and mapped_size each), outermost first.
  std::vector<FixtureParams> inner_called;
  bool x64 = false;  // run with jax_enable_x64 (absent: JAX's default, off)

  // The collective the function calls.
  std::optional<std::string> op;                    // psum, pmean, pmax, pmin, all_gather, psum_scatter
  std::optional<std::string> collective_axis_name;  // when it differs from axis_name
  std::vector<std::string> collective_axis_names;   // a tuple of names (nested pmap)
  std::optional<int> axis;                          // all_gather
  std::optional<bool> tiled;
  std::optional<int> scatter_dimension;
  std::optional<int> split_axis;
  std::optional<int> concat_axis;
  AxisIndexGroups groups;
  std::vector<std::pair<int, int>> ppermute_perm;  // perm as [source, destination] pairs
  std::vector<int> pshuffle_perm;                  // perm as a list: device i receives from perm[i]

  // Descriptive: they restate what the inputs or the function already say.
  std::optional<int> available_devices;
  std::optional<std::int64_t> mapped_size;
  std::optional<std::int64_t> static_value;
  std::vector<int> layer_sizes;
  std::optional<std::string> activation;
};

struct FixtureError {
  std::string type;     // the Python exception's class name
  std::string message;  // str(exception)
};

struct FixtureCase {
  std::string name;
  std::string jax_version;
  int num_devices = 0;
  std::string description;
  FixtureParams params;
  Args inputs;                        // the positional arguments, static ones included
  std::optional<Tree> outputs;        // what JAX returned, or
  std::optional<FixtureError> error;  // what it raised
};

// The case names (file stems of *.json) in `dir`, sorted; throws if `dir` cannot be listed.
std::vector<std::string> fixture_case_names(const std::filesystem::path& dir);
// Reads one fixture; throws std::runtime_error naming the file and what is wrong with it.
FixtureCase load_fixture(const std::filesystem::path& file);

// The function a case runs, from its name. The catalogue (make_fixtures.py) names cases
//   <category>[_<variant>...][_p<n>[_of_<m>]]
// where _p<n> is the device count. For a collective the category is the jax.lax function (psum, all_gather,
// axis_index_scale, ...): the name up to its first variant, a token among axis<k>, dim<k>, split<k>, groups,
// int32, scalar, tree, ring, partial, swap, reverse, rotate. Variants only change the params or the inputs.
// Cases of pmap's arguments (pmap_...), the seeds' examples (seed_...) and invalid inputs (error_...) each
// name their own function: their category is the whole name without _p<n>. Nested pmap cases (nested_...)
// and the dtype sweep (<collective>_dtype_<dtype>) take the collectives' rule, with the axis names (ij, ji,
// i, j), a shape (2x4) and the dtype among the variants.
std::string case_category(std::string_view case_name);

// The PmapOptions the fixture's pmap call had. With params.devices = n: the first n devices.
PmapOptions pmap_options(const FixtureParams& params, std::string name = "pmap");

}  // namespace spmdsim::testing
