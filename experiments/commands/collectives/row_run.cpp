#include "commands/collectives/row_run.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands/collectives/check.hpp"
#include "common/forked_run.hpp"
#include "common/sizes.hpp"
#include "spmdsim/collectives.hpp"
#include "spmdsim/pmap.hpp"

namespace spmdsim::cli::collectives {
namespace {

// The collective of `row` on each device, on the axis "i".
Array call_collective(const PlannedRow& row, const Array& x) {
  const CollectiveOptions options{.algorithm = row.algorithm};
  switch (row.collective->kind) {
    case CollectiveKind::all_reduce:
      return psum(x, "i", {}, options);
    case CollectiveKind::all_gather:
      return all_gather(x, "i", 0, true, {}, options);
    case CollectiveKind::reduce_scatter:
      return psum_scatter(x, "i", 0, true, {}, options);
    case CollectiveKind::all_to_all:
      return all_to_all(x, "i", 0, 0, true, {}, options);
    default:
      throw std::logic_error("the sweep does not run this collective");
  }
}

// What nccl_ring or nccl runs `row` on, where the platform has NCCL's or RCCL's figures: the group is the
// first p devices, shaped as the collectives take them (Platform::first_devices_shape).
std::optional<NcclChoice> row_nccl_choice(const Simulation& sim, const PlannedRow& row, DType dtype,
                                          const SimulationOptions& options) {
  const auto& platform = sim.platform();
  if ((row.algorithm != "nccl_ring" && row.algorithm != "nccl") || (!platform.nccl && !platform.rccl))
    return std::nullopt;
  const std::int64_t per_rank =
      row.collective->kind == CollectiveKind::all_gather ? row.elements_in : row.elements_in / row.p;
  const auto dimensions = platform.first_devices_shape(row.p);
  const auto size = static_cast<std::int64_t>(itemsize(dtype));
  const int channels = options.channels > 0 ? options.channels : group_ring_channels(platform, dimensions);
  if (!platform.nccl)
    return rccl_choice(*platform.rccl, row.algorithm, row.collective->kind, dimensions, per_rank, size,
                       channels, options.protocol);
  return nccl_choice(*platform.nccl, row.algorithm, row.collective->kind, dimensions, per_rank, size,
                     channels, options.protocol, platform.first_devices_switches_reduce(row.p));
}

}  // namespace

// Uniform values, the same for a row's collective, device count and size whatever else the sweep runs:
// floats in [-1, 1), integers in [-100, 100].
Array random_input(const PlannedRow& row, DType dtype) {
  Shape shape{row.p, row.elements_in};
  std::seed_seq seed{kSeed, static_cast<unsigned>(row.collective->kind), static_cast<unsigned>(row.p),
                     static_cast<unsigned>(row.bytes), static_cast<unsigned>(row.bytes >> 32)};
  std::mt19937_64 generator(seed);
  Storage storage = make_storage(dtype, num_elements(shape));
  std::visit(
      [&](auto& values) {
        using T = typename std::decay_t<decltype(values)>::Scalar;
        if constexpr (std::is_same_v<T, std::int32_t> || std::is_same_v<T, bool>) {
          std::uniform_int_distribution<int> uniform(-100, 100);
          for (Eigen::Index i = 0; i < values.size(); ++i) values[i] = static_cast<T>(uniform(generator));
        } else {
          std::uniform_real_distribution<double> uniform(-1.0, 1.0);
          for (Eigen::Index i = 0; i < values.size(); ++i) {
            if constexpr (std::is_arithmetic_v<T>)
              values[i] = static_cast<T>(uniform(generator));
            else
              values[i] = static_cast<T>(static_cast<float>(uniform(generator)));
          }
        }
      },
      storage);
  return Array(std::move(shape), std::move(storage));
}

RowResult run_row(Simulation& sim, const PlannedRow& row, const Array& input, bool check,
                  const SimulationOptions& options) {
  auto fn = pmap([&row](const Args& a) -> Tree { return call_collective(row, a[0].array()); },
                 {.in_axes = Axes(0),
                  .axis_name = "i",
                  .name = fmt::format("{} {}", row.collective->name, row.algorithm)});
  Tree output = fn(sim, {input});
  const auto report = sim.report();
  const CallReport& call = report.calls.back();
  RowResult result{.row = row, .nccl = row_nccl_choice(sim, row, input.dtype(), options)};
  for (const auto& times : call.times) {
    auto it = times.communication.find(std::string(row.collective->jax_name));
    if (it != times.communication.end()) result.time = std::max(result.time, it->second);
  }
  result.bus_factor = row.collective->bus_factor(row.p);
  result.algbw = result.time > 0 ? static_cast<double>(row.bytes) / result.time / 1e9 : 0;
  result.busbw = result.algbw * result.bus_factor;
  if (check && !row.abstract) result.max_error = max_error(row, input, sim.device_get(output).leaf());
  return result;
}

RowResult run_row_in_child(Simulation& sim, const PlannedRow& row, const Array& input, bool check,
                           const SimulationOptions& options) {
  // The figures cross as JSON, whose numbers nlohmann writes and reads back to the same double.
  const Seconds start = sim.now();
  const auto text = run_in_child(
      fmt::format("{} {} p={} {}", row.collective->name, row.algorithm, row.p, size_text(row.bytes)), [&] {
        const RowResult r = run_row(sim, row, input, check, options);
        nlohmann::json j{{"time", r.time},
                         {"algbw", r.algbw},
                         {"busbw", r.busbw},
                         {"bus_factor", r.bus_factor},
                         {"simulated", sim.now() - start}};
        if (r.max_error) j["max_error"] = *r.max_error;
        if (r.nccl) j["nccl"] = {r.nccl->algorithm, r.nccl->protocol, r.nccl->channels};
        return j.dump();
      });
  const auto j = nlohmann::json::parse(text);
  RowResult result{.row = row,
                   .time = j["time"].get<double>(),
                   .algbw = j["algbw"].get<double>(),
                   .busbw = j["busbw"].get<double>(),
                   .bus_factor = j["bus_factor"].get<double>(),
                   .simulated = j["simulated"].get<double>()};
  if (j.contains("max_error")) result.max_error = j["max_error"].get<double>();
  if (j.contains("nccl"))
    result.nccl =
        NcclChoice{j["nccl"][0].get<std::string>(), j["nccl"][1].get<std::string>(), j["nccl"][2].get<int>()};
  return result;
}

}  // namespace spmdsim::cli::collectives
