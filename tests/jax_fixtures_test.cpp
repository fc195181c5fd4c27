// Every JAX 0.5.2 reference case (tests/reference/fixtures) run in spmdsim: the same pmapped function on the
// same inputs must give JAX's tree structure, shapes, dtypes and values, or JAX's exception type and message.
// A second suite runs every value case on abstract inputs and checks the shapes and dtypes alone.
//
// Each case is one test (named after it), so gtest_discover_tests runs it in its own process: SimGrid allows
// one Simulation per process. The function a case runs comes from its category (fixture.hpp's
// case_category) through the dispatch table below, built from the case's params.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"
#include "spmdsim/simulation.hpp"
#include "test_cluster.hpp"

namespace spmdsim {
namespace {

using testing::FixtureCase;
using testing::FixtureParams;

const std::filesystem::path kFixtureDir = SPMDSIM_FIXTURE_DIR;

template <class T>
const T& need(const std::optional<T>& value, const char* key) {
  if (!value) throw std::invalid_argument(fmt::format("the case's params lack '{}'", key));
  return *value;
}

// The axis the case's collectives name: pmap's axis_name unless the case names another (an unbound one) or a
// tuple of names (nested pmap).
AxisName collective_axis(const FixtureParams& p) {
  if (!p.collective_axis_names.empty()) return AxisName(p.collective_axis_names);
  return p.collective_axis_name ? *p.collective_axis_name : need(p.axis_name, "axis_name");
}

// ---------------------------------------------------------------------------------------------------------
// The functions of the catalogue (make_fixtures.py), one C++ counterpart each.

DeviceFunction reduction(const std::string& op, const FixtureParams& p) {
  const AxisName axis = collective_axis(p);
  const AxisIndexGroups groups = p.groups;
  // psum and pmean take a tree (psum_tree passes a dict), as jax.lax's do.
  if (op == "psum") return [=](const Args& a) -> Tree { return psum(a[0].tree(), axis, groups); };
  if (op == "pmean") return [=](const Args& a) -> Tree { return pmean(a[0].tree(), axis, groups); };
  if (op == "pmax") return [=](const Args& a) -> Tree { return pmax(a[0].array(), axis, groups); };
  if (op == "pmin") return [=](const Args& a) -> Tree { return pmin(a[0].array(), axis, groups); };
  throw std::invalid_argument(fmt::format("unknown reduction '{}'", op));
}

DeviceFunction gather(const FixtureParams& p) {
  return [axis_name = collective_axis(p), axis = need(p.axis, "axis"), tiled = need(p.tiled, "tiled"),
          groups = p.groups](const Args& a) -> Tree {
    return all_gather(a[0].array(), axis_name, axis, tiled, groups);
  };
}

DeviceFunction reduce_scatter(const FixtureParams& p) {
  return [axis_name = collective_axis(p), dimension = need(p.scatter_dimension, "scatter_dimension"),
          tiled = need(p.tiled, "tiled"), groups = p.groups](const Args& a) -> Tree {
    return psum_scatter(a[0].array(), axis_name, dimension, tiled, groups);
  };
}

DeviceFunction permute_pairs(const FixtureParams& p) {
  return [axis_name = collective_axis(p), perm = p.ppermute_perm](const Args& a) -> Tree {
    return ppermute(a[0].array(), axis_name, perm);
  };
}

DeviceFunction shuffle(const FixtureParams& p) {
  return [axis_name = collective_axis(p), perm = p.pshuffle_perm](const Args& a) -> Tree {
    return pshuffle(a[0].array(), axis_name, perm);
  };
}

DeviceFunction exchange(const FixtureParams& p) {
  return [axis_name = collective_axis(p), split = need(p.split_axis, "split_axis"),
          concat = need(p.concat_axis, "concat_axis"), tiled = need(p.tiled, "tiled"),
          groups = p.groups](const Args& a) -> Tree {
    return all_to_all(a[0].array(), axis_name, split, concat, tiled, groups);
  };
}

DeviceFunction index_of_device(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args&) -> Tree { return axis_index(axis_name); };
}

DeviceFunction scale_by_index(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    return a[0].array() * (axis_index(axis_name) + 1.0);
  };
}

// Functions of the arguments alone.
DeviceFunction times_two(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() * 2.0; };
}
DeviceFunction plus_one(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() + 1.0; };
}
DeviceFunction two_x_plus_one(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() * 2.0 + 1.0; };
}
DeviceFunction add_args(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() + a[1].array(); };
}
DeviceFunction multiply_args(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() * a[1].array(); };
}

// lambda t: t['w'] * 2 + t['b']
DeviceFunction dict_affine(const FixtureParams&) {
  return [](const Args& a) -> Tree {
    const Tree& t = a[0].tree();
    return t["w"].leaf() * 2.0 + t["b"].leaf();
  };
}

// def f(params): return params[0] * 2
DeviceFunction first_of_list_times_two(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].tree()[0].leaf() * 2.0; };
}

// The seeds' mlp_forward: tanh(x @ w + b) on every layer but the last.
DeviceFunction mlp_forward(const FixtureParams& p) {
  if (need(p.activation, "activation") != "tanh")
    throw std::invalid_argument(fmt::format("mlp_forward with activation '{}'", *p.activation));
  return [](const Args& a) -> Tree {
    const Tree& params = a[0].tree();
    Array x = a[1].array();
    const std::size_t last = params.size() - 1;
    for (std::size_t layer = 0; layer < last; ++layer)
      x = tanh(dot(x, params[layer]["w"].leaf()) + params[layer]["b"].leaf());
    return dot(x, params[last]["w"].leaf()) + params[last]["b"].leaf();
  };
}

// The seeds' my_static_op_example(x_dynamic_shard, static_python_val, another_dynamic_val_replicated).
DeviceFunction static_op_example(const FixtureParams&) {
  return [](const Args& a) -> Tree {
    const Array& x = a[0].array();
    const std::int64_t static_value = a[1].as_int();
    const Array& replicated = a[2].array();
    if (static_value > 5) return x * 100.0 + replicated;
    return x * static_cast<double>(static_value) + replicated;
  };
}

// The seeds' process_data_shard_example: jnp.sum(data_shard * replicated_scalar_param, axis=0).
DeviceFunction process_data_shard(const FixtureParams&) {
  return [](const Args& a) -> Tree { return sum(a[0].array() * a[1].array(), 0); };
}

// lambda x: x * 2 + lax.axis_index('i')
DeviceFunction two_x_plus_index(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    return a[0].array() * 2.0 + axis_index(axis_name);
  };
}

// lambda x: (x * 2, lax.psum(x, 'i'))
DeviceFunction double_and_total(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return Tree::tuple({x * 2.0, psum(x, axis_name)});
  };
}

// lambda x: {'double': x * 2, 'total': lax.psum(x, 'i')}
DeviceFunction double_and_total_dict(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return Tree::dict({{"double", x * 2.0}, {"total", psum(x, axis_name)}});
  };
}

// The seeds' process_and_return_fixed_value: jnp.array(42.0).
DeviceFunction fixed_value(const FixtureParams&) {
  return [](const Args&) -> Tree { return Array::scalar(42.0); };
}

// The seeds' scale_and_sum: (x * 2, psum(jnp.sum(x * 2))).
DeviceFunction scale_and_sum(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    const Array scaled = a[0].array() * 2.0;
    return Tree::tuple({scaled, psum(sum(scaled), axis_name)});
  };
}

// The seeds' parallel_sum_and_mean.
DeviceFunction parallel_sum_and_mean(const FixtureParams& p) {
  return [axis_name = collective_axis(p)](const Args& a) -> Tree {
    const Array& x = a[0].array();
    const Array local_sum = sum(x);
    const Array global_sum = psum(local_sum, axis_name);
    // JAX folds psum of the Python int x.size into x.size * axis_size; here it is a psum of an int32 scalar,
    // which has the same value.
    const Array global_count = psum(Array::scalar(static_cast<double>(x.size()), DType::i32), axis_name);
    return Tree::dict(
        {{"local_sum", local_sum}, {"global_sum", global_sum}, {"global_mean", global_sum / global_count}});
  };
}

// The seeds' device_specific_computation: x * (device_id + 1).
DeviceFunction device_specific_computation(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() * (a[1].array() + 1.0); };
}

// Nested pmap: the innermost function.

// jax.pmap's docstring: (x / psum(x, 'i'), x / psum(x, 'j'), x / psum(x, ('i', 'j'))).
DeviceFunction normalize(const FixtureParams&) {
  return [](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return Tree::tuple({x / psum(x, "i"), x / psum(x, "j"), x / psum(x, {"i", "j"})});
  };
}

DeviceFunction indices_over_axes(const FixtureParams&) {
  return [](const Args&) -> Tree {
    return Tree::tuple({axis_index("i"), axis_index("j"), axis_index({"i", "j"}), axis_index({"j", "i"})});
  };
}

DeviceFunction sum_and_max_in_groups(const FixtureParams& p) {
  return [axis = collective_axis(p), groups = p.groups](const Args& a) -> Tree {
    return Tree::tuple({psum(a[0].array(), axis, groups), pmax(a[0].array(), axis, groups)});
  };
}

DeviceFunction two_x_plus_inner_index(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].array() * 2.0 + axis_index("j"); };
}

DeviceFunction sum_of_product(const FixtureParams& p) {
  return
      [axis = collective_axis(p)](const Args& a) -> Tree { return psum(a[0].array() * a[1].array(), axis); };
}

DeviceFunction three_axes(const FixtureParams&) {
  return [](const Args& a) -> Tree {
    return Tree::tuple({psum(a[0].array(), {"i", "j", "k"}), a[0].array() * axis_index({"k", "i", "j"})});
  };
}

DeviceFunction identity(const FixtureParams&) {
  return [](const Args& a) -> Tree { return a[0].tree(); };
}

DeviceFunction inner_sum(const FixtureParams&) {
  return [](const Args& a) -> Tree { return psum(a[0].array(), "j"); };
}

// The pmap a nested_called case's function calls in its body.
PmappedFunction called_pmap(const FixtureParams& p, DeviceFunction fn) {
  return pmap(std::move(fn), testing::pmap_options(p.inner_called.at(0), "inner"));
}

DeviceFunction called_in_body(const FixtureParams& p) {
  const auto inner = called_pmap(p, [](const Args& a) -> Tree {
    return psum(a[0].array(), "j") + axis_index("j") + axis_index("i") * 10;
  });
  return [inner](const Args& a) -> Tree {
    const Array& x = a[0].array();
    return inner({x * 2.0 + psum(x, "i")}).leaf() + 1.0;
  };
}

DeviceFunction called_over_both(const FixtureParams& p) {
  const auto inner = called_pmap(p, [](const Args& a) -> Tree { return psum(a[0].array(), {"i", "j"}); });
  return [inner](const Args& a) -> Tree { return inner({a[0].array()}).leaf() + axis_index("i"); };
}

DeviceFunction called_twice(const FixtureParams& p) {
  const auto twice = called_pmap(p, [](const Args& a) -> Tree { return a[0].array() * 2.0; });
  const auto total = called_pmap(p, [](const Args& a) -> Tree { return psum(a[0].array(), "j"); });
  return [twice, total](const Args& a) -> Tree {
    return twice({a[0].array()}).leaf() + total({a[0].array()}).leaf();
  };
}

DeviceFunction called_after_unbound_psum(const FixtureParams& p) {
  const auto inner = called_pmap(p, [](const Args& a) -> Tree { return a[0].tree(); });
  return [inner](const Args& a) -> Tree { return psum(a[0].array(), "j") + inner({a[0].array()}).leaf(); };
}

// ---------------------------------------------------------------------------------------------------------
// The dispatch table: category -> the function it runs and how its outputs compare with JAX's.

enum class Compare {
  exact,  // data movement, max/min, integer arithmetic, float ops that round as XLA's do
  // Float sums that XLA evaluates differently: in another order, or a * b + c contracted into one fused
  // multiply-add (one rounding where spmdsim's separate ops round twice). See kSumRtol.
  summed,
};

struct Category {
  std::string_view python;  // what JAX ran, as the catalogue writes it
  DeviceFunction (*body)(const FixtureParams&);
  Compare compare = Compare::exact;
  // The outputs do not depend on the inputs (a constant, the device's axis index): spmdsim computes them
  // even when the inputs are abstract, where jax.eval_shape would give shapes alone.
  bool constant_outputs = false;
};

DeviceFunction psum_body(const FixtureParams& p) {
  return reduction("psum", p);
}
DeviceFunction pmean_body(const FixtureParams& p) {
  return reduction("pmean", p);
}
DeviceFunction pmax_body(const FixtureParams& p) {
  return reduction("pmax", p);
}
DeviceFunction pmin_body(const FixtureParams& p) {
  return reduction("pmin", p);
}
DeviceFunction reduction_of_params(const FixtureParams& p) {
  return reduction(need(p.op, "op"), p);
}

const std::map<std::string, Category, std::less<>>& categories() {
  static const std::map<std::string, Category, std::less<>> table = {
      // Collectives.
      {"psum", {"lax.psum(x, 'i', axis_index_groups=groups)", psum_body, Compare::summed}},
      {"pmean", {"lax.pmean(x, 'i', axis_index_groups=groups)", pmean_body, Compare::summed}},
      {"pmax", {"lax.pmax(x, 'i', axis_index_groups=groups)", pmax_body}},
      {"pmin", {"lax.pmin(x, 'i')", pmin_body}},
      {"all_gather", {"lax.all_gather(x, 'i', axis=axis, tiled=tiled, axis_index_groups=groups)", gather}},
      {"psum_scatter",
       {"lax.psum_scatter(x, 'i', scatter_dimension=d, tiled=tiled, axis_index_groups=groups)",
        reduce_scatter, Compare::summed}},
      {"ppermute", {"lax.ppermute(x, 'i', perm=pairs)", permute_pairs}},
      {"pshuffle", {"lax.pshuffle(x, 'i', perm=perm)", shuffle}},
      {"all_to_all", {"lax.all_to_all(x, 'i', split_axis, concat_axis, tiled=tiled)", exchange}},
      {"axis_index", {"lax.axis_index('i')", index_of_device, Compare::exact, true}},
      {"axis_index_scale", {"x * (lax.axis_index('i') + 1)", scale_by_index}},
      // pmap's arguments.
      {"pmap_in_axes1", {"x * 2 + 1, in_axes=1", two_x_plus_one}},
      {"pmap_in_axes2", {"x * 2 + 1, in_axes=2", two_x_plus_one}},
      {"pmap_in_axes_0_none_scalar", {"x * s, in_axes=(0, None)", multiply_args}},
      {"pmap_in_axes_dict_prefix", {"t['w'] * 2 + t['b'], in_axes=({'w': 0, 'b': None},)", dict_affine}},
      {"pmap_mlp_forward_in_axes_none_0",
       {"mlp_forward(params, x), in_axes=(None, 0)", mlp_forward, Compare::summed}},
      {"pmap_out_axes1", {"x + 1, out_axes=1", plus_one}},
      {"pmap_out_axes_none_psum", {"lax.psum(x, 'i'), out_axes=None", psum_body, Compare::summed}},
      {"pmap_out_axes_tuple_0_none",
       {"(x * 2, lax.psum(x, 'i')), out_axes=(0, None)", double_and_total, Compare::summed}},
      {"pmap_static_argnums_value3", {"my_static_op_example(x, 3, r)", static_op_example, Compare::summed}},
      {"pmap_static_argnums_value7", {"my_static_op_example(x, 7, r)", static_op_example, Compare::summed}},
      {"pmap_devices_subset",
       {"jnp.sum(x * s, axis=0), devices=jax.devices()[:2]", process_data_shard, Compare::summed}},
      {"pmap_in_axes_none_axis_size",
       {"x * 2 + lax.axis_index('i'), in_axes=None, axis_size=4", two_x_plus_index}},
      {"pmap_returns_dict",
       {"{'double': x * 2, 'total': lax.psum(x, 'i')}", double_and_total_dict, Compare::summed}},
      // The seeds' examples.
      {"seed_scale", {"scale(x, s) = x * s", multiply_args}},
      {"seed_process_and_return_fixed_value",
       {"process_and_return_fixed_value(x, None) = jnp.array(42.0)", fixed_value, Compare::exact, true}},
      // int32: sums are exact in any order.
      {"seed_scale_and_sum", {"(x * 2, lax.psum(jnp.sum(x * 2), 'devices'))", scale_and_sum}},
      {"seed_simple_add", {"simple_add(x, y) = x + y", add_args}},
      {"seed_parallel_sum_and_mean", {"parallel_sum_and_mean(x)", parallel_sum_and_mean, Compare::summed}},
      {"seed_device_specific_computation", {"x * (device_id + 1)", device_specific_computation}},
      // Invalid inputs.
      {"error_all_gather_axis_out_of_range", {"lax.all_gather(x, 'i', axis=3)", gather}},
      {"error_all_in_axes_none_no_axis_size", {"x * 2, in_axes=None", times_two}},
      {"error_all_to_all_tiled_not_divisible", {"lax.all_to_all(x, 'i', 0, 1, tiled=True)", exchange}},
      {"error_all_to_all_untiled_size_ne_p", {"lax.all_to_all(x, 'i', 0, 1)", exchange}},
      {"error_fewer_mapped_than_devices_2_of_4", {"x * 2", times_two}},
      {"error_groups_not_a_partition",
       {"lax.psum(x, 'i', axis_index_groups=[[0, 1], [1, 2]])", reduction_of_params}},
      {"error_in_axes_beyond_rank", {"x * 2, in_axes=2", times_two}},
      {"error_in_axes_longer_than_args", {"add(x, y), in_axes=(0, 0, 0)", add_args}},
      {"error_in_axes_shorter_than_args", {"add(x, y), in_axes=(0,)", add_args}},
      {"error_in_axes_tree_mismatch",
       {"f(params) = params[0] * 2, in_axes=({'w': 0},)", first_of_list_times_two}},
      {"error_inconsistent_mapped_sizes", {"add(x, y)", add_args}},
      {"error_mapped_axis_size_zero", {"x * 2", times_two}},
      {"error_more_mapped_than_devices_3_of_2", {"x * 2", times_two}},
      {"error_more_mapped_than_devices_9_of_8", {"x * 2", times_two}},
      {"error_more_mapped_than_devices_9_of_8_explicit", {"x * 2", times_two}},
      {"error_out_axes_beyond_rank", {"x * 2, out_axes=2", times_two}},
      {"error_ppermute_index_out_of_range", {"lax.ppermute(x, 'i', perm=[(0, 4)])", permute_pairs}},
      {"error_ppermute_repeated_destination", {"lax.ppermute(x, 'i', perm=[(0, 1), (2, 1)])", permute_pairs}},
      {"error_ppermute_repeated_source", {"lax.ppermute(x, 'i', perm=[(0, 1), (0, 2)])", permute_pairs}},
      {"error_pshuffle_not_a_permutation", {"lax.pshuffle(x, 'i', perm=[0, 0, 1, 2])", shuffle}},
      {"error_psum_scatter_tiled_not_divisible", {"lax.psum_scatter(x, 'i', 0, tiled=True)", reduce_scatter}},
      {"error_psum_scatter_untiled_size_ne_p", {"lax.psum_scatter(x, 'i', 0)", reduce_scatter}},
      {"error_static_argnums_out_of_range", {"add(x, y), static_broadcasted_argnums=(5,)", add_args}},
      {"error_unbound_axis_name", {"lax.psum(x, 'j') under axis_name='i'", reduction_of_params}},
      // Nested pmap: pmap(pmap(f, axis_name='j'), axis_name='i').
      {"nested_normalize", {"(x / psum(x, 'i'), x / psum(x, 'j'), x / psum(x, ('i', 'j')))", normalize}},
      {"nested_axis_index",
       {"(axis_index('i'), axis_index('j'), axis_index(('i', 'j')), axis_index(('j', 'i')))",
        indices_over_axes, Compare::exact, true}},
      {"nested_all_gather", {"lax.all_gather(x, names)", gather}},
      {"nested_ppermute", {"lax.ppermute(x, ('i', 'j'), perm=ring)", permute_pairs}},
      {"nested_psum_scatter", {"lax.psum_scatter(x, ('i', 'j'))", reduce_scatter, Compare::summed}},
      {"nested_all_to_all", {"lax.all_to_all(x, names, 0, 1)", exchange}},
      {"nested_groups",
       {"(lax.psum(x, names, axis_index_groups=groups), lax.pmax(x, names, axis_index_groups=groups))",
        sum_and_max_in_groups, Compare::summed}},
      {"nested_shadowed_name",
       {"lax.psum(x, 'i'), the inner 'i' shadowing the outer", psum_body, Compare::summed}},
      {"nested_inner_in_axes1", {"x * 2 + axis_index('j'), inner in_axes=1", two_x_plus_inner_index}},
      {"nested_replicated_arg", {"lax.psum(x * w, ('i', 'j'))", sum_of_product, Compare::summed}},
      {"nested_three_levels", {"(psum(x, ('i', 'j', 'k')), x * axis_index(('k', 'i', 'j')))", three_axes}},
      {"nested_pmean", {"lax.pmean(x, ('i', 'j'))", pmean_body}},
      {"nested_psum", {"lax.psum(x, ('i', 'j'))", psum_body, Compare::summed}},
      {"error_nested_inner_axis_size", {"x, inner axis_size=3", identity}},
      {"error_nested_inner_devices", {"x, inner devices=jax.devices()[:4]", identity}},
      {"error_nested_inner_inconsistent_sizes", {"x + y", add_args}},
      {"error_nested_inner_out_axes1", {"x * 2, inner out_axes=1", times_two}},
      {"error_nested_inner_out_axes_none", {"lax.psum(x, 'j'), inner out_axes=None", inner_sum}},
      {"error_nested_more_than_available", {"x", identity}},
      {"error_nested_too_few_devices", {"x", identity}},
      {"error_nested_too_many_devices", {"x", identity}},
      {"error_nested_unbound_name", {"lax.psum(x, ('i', 'k'))", psum_body}},
      // Nested pmap called in the body: pmap(lambda x: ... pmap(g, axis_name='j')(...) ..., axis_name='i').
      {"nested_called_in_body",
       {"pmap(psum(v, 'j') + axis_index('j') + 10 * axis_index('i'))(x * 2 + psum(x, 'i')) + 1",
        called_in_body, Compare::summed}},
      {"nested_called_over_both",
       {"pmap(psum(v, ('i', 'j')))(x) + axis_index('i')", called_over_both, Compare::summed}},
      {"nested_called_twice", {"pmap(v * 2)(x) + pmap(psum(v, 'j'))(x)", called_twice, Compare::summed}},
      {"error_nested_called_unbound_name", {"psum(x, 'j') + pmap(v)(x)", called_after_unbound_psum}},
  };
  return table;
}

const Category* find_category(std::string_view case_name) {
  const auto it = categories().find(testing::case_category(case_name));
  return it == categories().end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------------------
// Running a case and comparing with JAX.

// JAX had 8 CPU devices; a case that passed devices=jax.devices()[:n] runs on a cluster of n (of 8 when the
// nested pmap needs more than n). jax_enable_x64 as the case ran it.
Simulation make_simulation(const FixtureParams& params) {
  const int devices = params.inner.empty() && params.inner_called.empty()
                          ? params.devices.value_or(testing::kJaxDeviceCount)
                          : testing::kJaxDeviceCount;
  SimulationOptions options;
  options.enable_x64 = params.x64;
  return Simulation(topologies::switch_cluster(spmdsim::testing::round_numbers_cluster(devices)), options);
}

// The case's pmap, nested as the case nests it.
PmappedFunction make_pmap(const Category& category, const FixtureCase& c) {
  if (c.params.inner.empty()) return pmap(category.body(c.params), testing::pmap_options(c.params, c.name));
  PmappedFunction fn = pmap(category.body(c.params), testing::pmap_options(c.params.inner.back(), c.name));
  for (auto level = c.params.inner.size() - 1; level-- > 0;)
    fn = pmap(fn, testing::pmap_options(c.params.inner[level], c.name));
  return pmap(fn, testing::pmap_options(c.params, c.name));
}

template <class Fn>
Args map_arrays(const Args& args, Fn fn) {
  Args out;
  for (const auto& arg : args) out.push_back(arg.is_static() ? arg : Arg(arg.tree().map(fn)));
  return out;
}

std::vector<std::pair<std::string, Array>> leaves_with_paths(const Tree& tree, const std::string& path = "") {
  std::vector<std::pair<std::string, Array>> out;
  auto append = [&out](std::vector<std::pair<std::string, Array>> more) {
    out.insert(out.end(), more.begin(), more.end());
  };
  if (tree.is_leaf())
    out.emplace_back(path.empty() ? "output" : "output" + path, tree.leaf());
  else if (const auto* dict = std::get_if<Tree::Dict>(&tree.node()))
    for (const auto& [key, child] : dict->items)
      append(leaves_with_paths(child, fmt::format("{}['{}']", path, key)));
  else
    for (std::size_t i = 0; i < tree.size(); ++i)
      append(leaves_with_paths(tree[i], fmt::format("{}[{}]", path, i)));
  return out;
}

// Float sums that XLA evaluates differently from spmdsim are compared with a float32 tolerance:
// |got - jax| <= 1e-6 * m elementwise, where m is the magnitude of the summed terms: the same function run
// on |inputs| (for sums, products, dot and tanh, which is monotone and odd, that bounds every term and every
// partial sum). A reordered float32 sum, or a fused multiply-add, differs by a few roundings of 2^-24 of that
// magnitude; 1e-6 is ~17 of them. Integer outputs are compared exactly: integer sums do not depend on the
// order.
constexpr double kSumRtol = 1e-6;

void expect_leaf(const std::string& path, const Array& got, const Array& jax, const Array* magnitude) {
  EXPECT_EQ(shape_str(got.shape()), shape_str(jax.shape())) << path;
  EXPECT_EQ(dtype_name(got.dtype()), dtype_name(jax.dtype())) << path;
  if (got.shape() != jax.shape()) return;
  ASSERT_FALSE(got.is_abstract()) << path;
  const std::vector<double> values = got.to_doubles();
  const std::vector<double> expected = jax.to_doubles();
  const bool tolerant = magnitude != nullptr && is_floating(jax.dtype());
  const std::vector<double> scale =
      tolerant ? magnitude->to_doubles() : std::vector<double>(values.size(), 0.0);
  ASSERT_EQ(scale.size(), values.size()) << path << ": magnitude of another size";
  int reported = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double allowed = kSumRtol * scale[i];
    if (values[i] == expected[i] || std::abs(values[i] - expected[i]) <= allowed) continue;
    if (++reported > 5) {
      ADD_FAILURE() << path << ": more mismatches left out";
      return;
    }
    ADD_FAILURE() << fmt::format("{} at flat index {}: got {}, JAX {} ({})", path, i, values[i], expected[i],
                                 tolerant ? fmt::format("allowed {:.3g}", allowed) : std::string("exact"));
  }
}

void expect_outputs(const Tree& got, const Tree& jax, const Tree* magnitude) {
  ASSERT_EQ(got.treedef(), jax.treedef());
  const auto got_leaves = leaves_with_paths(got);
  const auto jax_leaves = leaves_with_paths(jax);
  const auto magnitude_leaves = magnitude ? leaves_with_paths(*magnitude) : decltype(got_leaves){};
  for (std::size_t i = 0; i < got_leaves.size(); ++i)
    expect_leaf(got_leaves[i].first, got_leaves[i].second, jax_leaves[i].second,
                magnitude ? &magnitude_leaves[i].second : nullptr);
}

// JAX's message as spmdsim words it. The differences are deliberate:
// - JAX's CPU devices are TFRT_CPU_<n>; the switch cluster names them dev<n>.
// - For a ppermute index beyond the axis JAX 0.5.2 raises Python's bare "list index out of range" (it indexes
//   a list with the bad index); spmdsim keeps the IndexError but names the index and the axis size.
// Everything else is JAX's text as is (error_mapped_axis_size_zero included: the devices= form raises JAX's
// "Leading axis size ..." message with axis_size=0).
std::string spmdsim_message(const FixtureCase& c) {
  std::string message = std::regex_replace(c.error->message, std::regex(R"(TFRT_CPU_(\d+))"), "dev$1");
  if (c.name == "error_ppermute_index_out_of_range") {
    const int size = c.params.devices.value_or(testing::kJaxDeviceCount);
    for (const auto& [source, destination] : c.params.ppermute_perm)
      for (int index : {source, destination})
        if (index < 0 || index >= size)
          return fmt::format("ppermute index {} out of range for axis size {}", index, size);
  }
  return message;
}

void expect_jax_error(Simulation& sim, const PmappedFunction& fn, const FixtureCase& c) {
  try {
    sim.device_get(fn(sim, c.inputs));
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.python_type()), c.error->type);
    EXPECT_EQ(std::string(e.what()), spmdsim_message(c));
    return;
  }
  ADD_FAILURE() << "no exception; JAX raised " << c.error->type << ": " << c.error->message;
}

std::string case_file(const std::string& name) {
  return (kFixtureDir / (name + ".json")).string();
}

class JaxCase : public ::testing::TestWithParam<std::string> {};

TEST_P(JaxCase, MatchesJax) {
  const FixtureCase c = testing::load_fixture(case_file(GetParam()));
  SCOPED_TRACE(c.description);
  const Category* category = find_category(c.name);
  ASSERT_NE(category, nullptr) << "no dispatch entry for category " << testing::case_category(c.name);
  SCOPED_TRACE(fmt::format("category {}: {}", testing::case_category(c.name), category->python));
  Simulation sim = make_simulation(c.params);
  const PmappedFunction fn = make_pmap(*category, c);
  if (c.error) {
    expect_jax_error(sim, fn, c);
    return;
  }
  const Tree got = sim.device_get(fn(sim, c.inputs));
  if (category->compare == Compare::exact) {
    expect_outputs(got, *c.outputs, nullptr);
    return;
  }
  // The magnitude of the summed terms: a second call on |inputs| (same simulation, later in its timeline).
  const Tree magnitude =
      sim.device_get(fn(sim, map_arrays(c.inputs, [](const Array& x) { return spmdsim::abs(x); })));
  expect_outputs(got, *c.outputs, &magnitude);
}

class Abstract : public ::testing::TestWithParam<std::string> {};

// Abstract inputs (shape and dtype only) give JAX's output shapes and dtypes, and abstract outputs.
TEST_P(Abstract, MatchesJaxShapesAndDtypes) {
  const FixtureCase c = testing::load_fixture(case_file(GetParam()));
  SCOPED_TRACE(c.description);
  ASSERT_TRUE(c.outputs.has_value()) << "an error case";
  const Category* category = find_category(c.name);
  ASSERT_NE(category, nullptr) << "no dispatch entry for category " << testing::case_category(c.name);
  SCOPED_TRACE(fmt::format("category {}: {}", testing::case_category(c.name), category->python));
  Simulation sim = make_simulation(c.params);
  const PmappedFunction fn = make_pmap(*category, c);
  const Args inputs =
      map_arrays(c.inputs, [](const Array& x) { return Array::abstract(x.shape(), x.dtype()); });
  const Tree got = sim.device_get(fn(sim, inputs));
  ASSERT_EQ(got.treedef(), c.outputs->treedef());
  const auto got_leaves = leaves_with_paths(got);
  const auto jax_leaves = leaves_with_paths(*c.outputs);
  for (std::size_t i = 0; i < got_leaves.size(); ++i) {
    const auto& [path, leaf] = got_leaves[i];
    EXPECT_EQ(shape_str(leaf.shape()), shape_str(jax_leaves[i].second.shape())) << path;
    EXPECT_EQ(dtype_name(leaf.dtype()), dtype_name(jax_leaves[i].second.dtype())) << path;
    EXPECT_EQ(leaf.is_abstract(), !category->constant_outputs) << path;
  }
}

TEST(Fixtures, EveryCaseIsCovered) {
  const auto names = testing::fixture_case_names(kFixtureDir);
  ASSERT_FALSE(names.empty()) << "no fixtures in " << kFixtureDir;
  for (const auto& name : names)
    EXPECT_NE(find_category(name), nullptr)
        << name << ": category '" << testing::case_category(name) << "' has no dispatch entry";
}

// ---------------------------------------------------------------------------------------------------------
// Parameters: one test per fixture file, named after its case.

std::vector<std::string> all_cases() {
  return testing::fixture_case_names(kFixtureDir);
}

std::vector<std::string> value_cases() {
  std::vector<std::string> out;
  for (const auto& name : all_cases()) {
    try {
      if (!testing::load_fixture(case_file(name)).error) out.push_back(name);
    } catch (const std::exception&) {
      out.push_back(name);  // unreadable: its test says why
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// "jax_fixtures" in every test's name lets `ctest -R jax_fixtures` select the suite.
INSTANTIATE_TEST_SUITE_P(jax_fixtures, JaxCase, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(jax_fixtures, Abstract, ::testing::ValuesIn(value_cases()), case_name);

}  // namespace
}  // namespace spmdsim
