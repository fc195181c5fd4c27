#include "commands/demo/examples.hpp"

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "spmdsim/collectives.hpp"
#include "spmdsim/ops.hpp"
#include "spmdsim/pmap.hpp"

namespace spmdsim::cli::demo {
namespace {

// 0, 1, 2, ... as float32 in the given shape, divided by `scale`: deterministic stand-ins for the
// tutorials' random data.
Array ramp(Shape shape, double scale = 1.0) {
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) / scale;
  return Array::from_values(std::move(shape), values);
}

// Uniform values in [-1, 1) from a fixed seed: reproducible data that is not collinear.
Array noise(Shape shape, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(num_elements(shape)));
  for (auto& v : values) v = uniform(generator);
  return Array::from_values(std::move(shape), values);
}

void show(std::ostream& out, const std::string& label, const Array& value) {
  out << fmt::format("   {} {}:\n", label, shape_str(value.shape()));
  std::string text = value.to_string();
  std::string indented = "   ";
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "   ";
  }
  out << indented << "\n";
}

void section(std::ostream& out, const std::string& title) {
  out << "\n" << title << "\n";
}

}  // namespace

void run_examples(Simulation& sim, int n, std::ostream& out) {
  section(out, "1. scale(x, s) with in_axes=(0, 0): each device scales its row by its own factor");
  std::vector<double> factors;
  for (int i = 0; i < n; ++i) factors.push_back(10.0 * (i + 1));
  auto scale = pmap([](const Args& a) -> Tree { return a[0].array() * a[1].array(); },
                    {.in_axes = Axes::tuple({0, 0}), .axis_name = "i", .name = "scale"});
  show(out, "result", sim.device_get(scale(sim, {ramp({n, 4}), Array::from_values({n}, factors)})).leaf());

  section(out, "2. in_axes=(0, None): a sharded batch and a replicated parameter");
  auto process = pmap([](const Args& a) -> Tree { return sum(a[0].array() * a[1].array(), 0); },
                      {.in_axes = Axes::tuple({0, none}), .axis_name = "data_axis", .name = "process_shard"});
  Array batch = ramp({n, 8, 3}, 8.0 * 3 * n);
  show(out, "per-device feature sums", sim.device_get(process(sim, {batch, Array::scalar(5.0)})).leaf());

  section(out, "3. out_axes=None: every device returns the same value, pmap returns one copy");
  auto fixed = pmap([](const Args&) -> Tree { return Array::scalar(42.0); },
                    {.in_axes = Axes::tuple({0, none}), .out_axes = Axes(none), .name = "fixed_value"});
  show(out, "result", sim.device_get(fixed(sim, {Array::zeros({n, 1}), none})).leaf());

  section(out, "4. static_broadcasted_argnums=(1,): a compile-time constant chooses the computation");
  auto static_op = pmap(
      [](const Args& a) -> Tree {
        const Array& x = a[0].array();
        return a[1].as_int() > 5 ? x * 100.0 + a[2].array()
                                 : x * static_cast<double>(a[1].as_int()) + a[2].array();
      },
      {.in_axes = Axes::tuple({0, none, none}), .static_broadcasted_argnums = {1}, .name = "static_op"});
  Array first_features = ramp({n, 8}, 8.0 * n);
  for (int value : {7, 3})
    show(out, fmt::format("static value {}, first element per device", value),
         take(sim.device_get(static_op(sim, {first_features, value, Array::scalar(0.5)})).leaf(), 1, 0));

  section(out, fmt::format("5. devices=[0..{}]: the same function on half of the devices",
                           std::max(1, n / 2) - 1));
  auto subset = pmap([](const Args& a) -> Tree { return sum(a[0].array() * a[1].array(), 0); },
                     {.in_axes = Axes::tuple({0, none}),
                      .devices =
                          [n] {
                            std::vector<int> d;
                            for (int i = 0; i < std::max(1, n / 2); ++i) d.push_back(i);
                            return d;
                          }(),
                      .name = "process_subset"});
  show(out, "result",
       sim.device_get(subset(sim, {slice(batch, 0, 0, std::max(1, n / 2)), Array::scalar(5.0)})).leaf());

  section(out, "6. collectives: psum, pmean and all_gather across the devices");
  auto collectives = pmap(
      [](const Args& a) -> Tree {
        Array local = matmul(a[0].array(), a[1].array());
        return Tree::tuple({psum(local, "mesh"), pmean(take(take(local, 0, 0), 0, 0), "mesh"),
                            all_gather(take(local, 0, 0), "mesh")});
      },
      {.in_axes = Axes::tuple({0, none}), .axis_name = "mesh", .name = "collectives"});
  Tree results = sim.device_get(collectives(sim, {batch, ramp({3, 2}, 6.0)}));
  show(out, "psum, device 0's copy", take(results[0].leaf(), 0, 0));
  show(out, "pmean of each device's first value", results[1].leaf());
  show(out, "all_gather of first rows, device 0's copy", take(results[2].leaf(), 0, 0));

  section(out, "7. data-parallel training: a linear model, gradients averaged with pmean");
  // Replicated weights stay on the devices between steps (out_axes None, then in_axes None): only each
  // step's batch crosses the host links.
  auto train_step = pmap(
      [](const Args& a) -> Tree {
        const Array& w = a[0].array();
        const Array& x = a[1].array();
        const Array& y = a[2].array();
        Array error = matmul(x, w) - y;
        Array loss = mean(square(error));
        Array grad = matmul(transpose(x), error) * (2.0 / static_cast<double>(x.shape()[0]));
        grad = pmean(grad, "batch");
        return Tree::tuple({w - grad * 0.5, pmean(loss, "batch")});
      },
      {.in_axes = Axes::tuple({none, 0, 0}),
       .out_axes = Axes::tuple({none, none}),
       .axis_name = "batch",
       .name = "train_step"});
  Array true_w = Array::from_values({4, 1}, {0.5, -1.0, 2.0, 0.25});
  show(out, "weights to learn", true_w.reshaped({4}));
  Tree w = Array::zeros({4, 1});
  for (int step = 0; step < 8; ++step) {
    Array x = noise({n, 16, 4}, static_cast<unsigned>(step));
    Array y = matmul(x, true_w);
    Tree result = train_step(sim, {w, x, y});
    w = result[0];
    out << fmt::format("   step {}: loss {:.6f}\n", step, sim.device_get(result[1]).leaf().item(0));
  }
  show(out, "learned weights", sim.device_get(w).leaf().reshaped({4}));
}

}  // namespace spmdsim::cli::demo
