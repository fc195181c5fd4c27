#include "commands/collectives/output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/platform_options.hpp"
#include "common/sizes.hpp"

namespace spmdsim::cli::collectives {
namespace {

std::string maxerr_text(const RowResult& r) {
  if (r.row.abstract) return "n/a";
  if (!r.max_error) return "-";
  return *r.max_error == 0 ? "0" : fmt::format("{:.2e}", *r.max_error);
}

std::string_view mode_text(const PlannedRow& row) {
  return row.abstract ? "abstract" : "real";
}

}  // namespace

std::vector<Column> sweep_columns(std::size_t algorithm_width) {
  return {{.key = "collective"},
          {.key = "jax_name"},
          {.key = "size_bytes", .header = "size", .width = 12},
          {.key = "count_elements", .header = "count", .width = 12},
          {.key = "type", .header = "type", .width = 8},
          {.key = "redop", .header = "redop", .width = 5},
          {.key = "algorithm", .header = "algorithm", .width = algorithm_width},
          {.key = "nccl_algorithm", .header = "nccl", .width = 8},  // "NVLSTree"
          {.key = "protocol", .header = "proto", .width = 6},
          {.key = "channels", .header = "ch", .width = 3},
          {.key = "devices", .header = "p", .width = 4},
          {.key = "time_us", .header = "time(us)", .width = 10},
          {.key = "algbw_GB_per_s", .header = "algbw(GB/s)", .width = 11},
          {.key = "busbw_GB_per_s", .header = "busbw(GB/s)", .width = 11},
          {.key = "busbw_factor"},
          {.key = "max_abs_error", .header = "maxerr", .width = 8},
          {.key = "mode", .header = "mode", .width = 8}};
}

std::vector<Cell> row_cells(const RowResult& r, DType dtype) {
  return {text_cell(std::string(r.row.collective->name)),
          text_cell(std::string(r.row.collective->jax_name)),
          whole_cell(r.row.bytes),
          whole_cell(r.row.count),
          text_cell(std::string(dtype_name(dtype))),
          text_cell(std::string(r.row.collective->redop)),
          text_cell(r.row.algorithm),
          r.nccl ? text_cell(r.nccl->algorithm) : empty_cell("-"),
          r.nccl ? text_cell(r.nccl->protocol) : empty_cell("-"),
          r.nccl ? whole_cell(r.nccl->channels) : empty_cell("-"),
          whole_cell(r.row.p),
          real_cell(r.time * 1e6, 2),
          real_cell(r.algbw, 2),
          real_cell(r.busbw, 2),
          real_cell(r.bus_factor, fmt::format("{}", r.bus_factor)),
          r.max_error ? real_cell(*r.max_error, maxerr_text(r)) : empty_cell(maxerr_text(r)),
          text_cell(std::string(mode_text(r.row)))};
}

void TableWriter::header(const SweepInfo& info) {
  std::vector<std::string> settings;
  for (const auto& [key, value] : info.simgrid) settings.push_back(key + ":" + value);
  out_ << "# spmdsim collectives: an nccl-tests-style sweep on simulated devices\n"
       << fmt::format("# platform: {} ({})\n", info.platform, info.chosen->summary)
       << fmt::format("# simgrid:  {} ({})\n", fmt::join(settings, ", "), info.simgrid_source)
       << fmt::format(
              "# sweep:    {}; devices {}; {}; random data (seed {}); rows above {} run abstract ({})\n",
              info.sizes, info.devices, dtype_name(info.dtype), kSeed, size_text(info.abstract_above),
              info.abstract_source);
  std::vector<std::string> options;
  if (info.aggregate)
    options.push_back("ring phases aggregated (--aggregate: abstract rows, and real rows' ring all_reduce)");
  if (!info.dimension_algorithms.empty())
    options.push_back(fmt::format("multidim runs {} along the dimensions (--dimension-algorithms)",
                                  fmt::join(info.dimension_algorithms, ", ")));
  if (info.channels > 0)
    options.push_back(fmt::format("nccl_ring runs {} channels (--channels)", info.channels));
  if (!info.protocol.empty())
    options.push_back(fmt::format("nccl_ring runs NCCL's {} protocol (--protocol)", info.protocol));
  if (!options.empty()) out_ << fmt::format("# options:  {}\n", fmt::join(options, "; "));
  out_ << "# legend:   size = S in bytes (nccl-tests' S), count = elements per rank in the call, time = the "
          "collective on its slowest device (its kernel's launch included), algbw = S/time, busbw = algbw x "
          "factor, nccl proto ch = what an "
          "nccl or nccl_ring row runs on (NCCL's algorithm, protocol, channels), maxerr = largest |result - "
          "float64 reference| (--check; - unchecked, n/a abstract), mode = real data or abstract (shapes "
          "only)\n";
}

void TableWriter::section(const Collective& c) {
  out_ << fmt::format("\n# {} ({}): busbw = algbw x {}\n", c.name, c.jax_name, c.factor_formula);
  write_table_header(out_, columns_);
}

void TableWriter::row(const std::vector<Cell>& cells) {
  write_table_row(out_, columns_, cells);
  out_.flush();
}

void TableWriter::note(const std::string& text) {
  out_ << "# " << text << "\n";
}

void write_json(std::ostream& out, const SweepInfo& info, const Rows& rows,
                const std::vector<std::string>& notes, double wall_seconds, Seconds simulated) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["command"] = "spmdsim collectives";
  add_platform_json(j, *info.chosen, info.platform, info.simgrid, info.simgrid_args);
  j["dtype"] = dtype_name(info.dtype);
  j["seed"] = kSeed;
  j["abstract_above_bytes"] = info.abstract_above;
  j["abstract_above_source"] = info.abstract_source;
  j["check"] = info.check;
  j["aggregate_ring_phases"] = info.aggregate;
  j["dimension_algorithms"] = info.dimension_algorithms;
  j["channels"] =
      info.channels == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.channels);
  j["protocol"] =
      info.protocol.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.protocol);
  j["wall_time_s"] = wall_seconds;
  j["simulated_time_s"] = simulated;
  j["notes"] = notes;
  j["rows"] = rows_json(rows);
  out << j.dump(2) << "\n";
}
}  // namespace spmdsim::cli::collectives
