#include "presets_command.hpp"

#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "command_line.hpp"
#include "spmdsim/topologies/presets.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;
using namespace topologies;

// ---------------------------------------------------------------------------------------------------------
// The results model: each preset as rows of (figure, value, source), apart from how they are written.

struct Row {
  std::string key;              // JSON key
  std::string label;            // table label
  std::string text;             // the value as the table shows it, with its unit
  std::optional<double> value;  // SI, for JSON
  std::string unit;             // of value
  std::string source;
};

struct Entry {
  std::string name;
  std::string title;
  std::vector<Row> rows;
};

struct Section {
  std::string name;  // "devices", as --kind takes it
  std::vector<Entry> entries;
};

std::string gbps(double bytes_per_second) {
  return fmt::format("{:g} GB/s", bytes_per_second / 1e9);
}
std::string microseconds(double seconds) {
  return fmt::format("{:g} us", seconds * 1e6);
}

Row figure_row(std::string key, std::string label, const Figure& f, std::string text, std::string unit) {
  return {std::move(key), std::move(label), std::move(text), f.value, std::move(unit), std::string(f.source)};
}

// Two rows: the model with the reason for it, and the SimGrid settings that select it.
void add_model_rows(std::vector<Row>& rows, const NetworkModel& model) {
  rows.push_back({"network_model", "network model", std::string(model.name), std::nullopt, "",
                  std::string(model.reason)});
  rows.push_back({"simgrid_config", "simgrid settings",
                  fmt::format("{}", fmt::join(model.simgrid_config, " ")), std::nullopt, "", ""});
}

Section devices_section() {
  Section section{"devices", {}};
  for (const auto& d : device_presets()) {
    Entry e{std::string(d.name), std::string(d.model), {}};
    for (const auto& [dtype, figure] : d.peak_flops)
      e.rows.push_back(figure_row(fmt::format("peak_flops.{}", dtype_name(dtype)),
                                  fmt::format("peak {}", dtype_name(dtype)), figure,
                                  fmt::format("{:g} TFLOP/s", figure.value / 1e12), "FLOP/s"));
    e.rows.push_back(figure_row("memory_capacity", "HBM capacity", d.memory_capacity,
                                fmt::format("{:g} GiB", d.memory_capacity.value / (1ull << 30)), "B"));
    e.rows.push_back(figure_row("memory_bandwidth", "HBM bandwidth", d.memory_bandwidth,
                                gbps(d.memory_bandwidth.value), "B/s"));
    e.rows.push_back({"notes", "note", std::string(d.notes), std::nullopt, "", ""});
    section.entries.push_back(std::move(e));
  }
  return section;
}

Section links_section() {
  Section section{"links", {}};
  for (const auto& l : link_presets()) {
    Entry e{std::string(l.name), std::string(l.description), {}};
    e.rows.push_back(figure_row("bandwidth", "bandwidth", l.bandwidth, gbps(l.bandwidth.value), "B/s"));
    if (l.achievable)
      e.rows.push_back(
          figure_row("achievable", "achievable", *l.achievable, gbps(l.achievable->value), "B/s"));
    e.rows.push_back(figure_row("latency", "latency", l.latency, microseconds(l.latency.value), "s"));
    add_model_rows(e.rows, *l.network_model);
    section.entries.push_back(std::move(e));
  }
  return section;
}

// "pcie_gen5_x16: 55.43 GB/s (achievable; nominal 63 GB/s)" or "ib_hdr: 25 GB/s (nominal)".
std::string link_use_text(const LinkPreset& link) {
  if (!link.achievable) return fmt::format("{}: {} (nominal)", link.name, gbps(link.bandwidth.value));
  return fmt::format("{}: {} (achievable; nominal {})", link.name, gbps(link.achievable->value),
                     gbps(link.bandwidth.value));
}

// Why this link, then where its rate comes from.
std::string link_use_source(std::string_view choice_source, const LinkPreset& link) {
  const auto rate = link.achievable ? link.achievable->source : link.bandwidth.source;
  return choice_source.empty() ? std::string(rate) : fmt::format("{}; rate: {}", choice_source, rate);
}

std::string sizes_text(const std::vector<double>& sizes) {
  std::vector<std::string> items;
  for (double s : sizes) items.push_back(fmt::format("{:g}", s / (1ull << 30)));
  return fmt::format("{} GiB", fmt::join(items, ", "));
}

Section nodes_section() {
  Section section{"nodes", {}};
  for (const auto& n : node_presets()) {
    const auto& device_link = link_preset(n.device_link);
    const auto& host_link = link_preset(n.host_link);
    const auto& nic = link_preset(n.nic);
    const LinkSpec simulated = n.effective_device_link();
    Entry e{std::string(n.name), std::string(n.description), {}};
    e.rows.push_back({"devices", "devices", fmt::format("{} x {}", n.devices_per_node, n.device),
                      static_cast<double>(n.devices_per_node), "", std::string(n.devices_source)});
    e.rows.push_back({"fabric", "fabric", n.fabric == NodeFabric::nvswitch ? "nvswitch" : "full mesh",
                      std::nullopt, "", std::string(n.fabric_source)});
    e.rows.push_back({"device_link", "device link", link_use_text(device_link),
                      device_link.effective_spec().bandwidth, "B/s", link_use_source("", device_link)});
    e.rows.push_back(figure_row("model_correction", "model correction", n.model_correction,
                                fmt::format("{:g}", n.model_correction.value), ""));
    e.rows.push_back({"simulated_device_link", "simulated link",
                      fmt::format("{:.1f} GB/s, {} ({:.3f} x nominal)", simulated.bandwidth / 1e9,
                                  microseconds(simulated.latency), n.calibration_factor()),
                      simulated.bandwidth, "B/s", "derived: device link x model correction"});
    e.rows.push_back({"host_link", "host link", link_use_text(host_link),
                      host_link.effective_spec().bandwidth, "B/s",
                      link_use_source(n.host_link_source, host_link)});
    e.rows.push_back(figure_row("host_memory_bandwidth", "host memory bw", n.host_memory_bandwidth,
                                n.host_memory_bandwidth.value > 0 ? gbps(n.host_memory_bandwidth.value) : "-",
                                "B/s"));
    e.rows.push_back({"nic", "NIC per device", link_use_text(nic), nic.effective_spec().bandwidth, "B/s",
                      link_use_source(n.nic_source, nic)});
    add_model_rows(e.rows, *n.network_model);
    if (n.calibration) {
      const auto& c = *n.calibration;
      const std::string range = c.busbw_low == c.busbw_high
                                    ? fmt::format("{:g}", c.busbw_low / 1e9)
                                    : fmt::format("{:g}-{:g}", c.busbw_low / 1e9, c.busbw_high / 1e9);
      e.rows.push_back(
          {"calibration", c.not_calibrated.empty() ? "calibrated to" : "compared with",
           fmt::format("{} all-reduce busbw {} GB/s at {}", c.algorithm, range, sizes_text(c.sizes)),
           c.midpoint(), "B/s", std::string(c.source)});
      if (!c.not_calibrated.empty())
        e.rows.push_back(
            {"not_calibrated", "not calibrated", std::string(c.not_calibrated), std::nullopt, "", ""});
    }
    section.entries.push_back(std::move(e));
  }
  return section;
}

Section slices_section() {
  Section section{"slices", {}};
  for (const auto& s : slice_presets()) {
    const auto& link = link_preset(s.link);
    const auto& host_link = link_preset(s.host_link);
    int chips = 1;
    for (int d : s.shape) chips *= d;
    Entry e{std::string(s.name), fmt::format("{} slice", device_preset(s.device).model), {}};
    e.rows.push_back(
        {"chips", "chips", fmt::format("{} x {}", chips, s.device), static_cast<double>(chips), "", ""});
    e.rows.push_back({"shape", "shape",
                      fmt::format("{} {}", fmt::join(s.shape, "x"), s.wraparound ? "torus" : "mesh"),
                      std::nullopt, "", std::string(s.shape_source)});
    e.rows.push_back({"link", "link",
                      fmt::format("{}: {}, {} per hop", s.link, gbps(link.bandwidth.value),
                                  microseconds(link.latency.value)),
                      link.bandwidth.value, "B/s", std::string(link.bandwidth.source)});
    e.rows.push_back({"host_link", "host link", link_use_text(host_link),
                      host_link.effective_spec().bandwidth, "B/s", std::string(host_link.bandwidth.source)});
    add_model_rows(e.rows, *s.network_model);
    e.rows.push_back({"builder", "builder", "torus (topologies/torus.hpp)", std::nullopt, "", ""});
    section.entries.push_back(std::move(e));
  }
  return section;
}

struct Kind {
  std::string_view name;
  Section (*make)();
};

constexpr Kind kKinds[] = {{"devices", &devices_section},
                           {"links", &links_section},
                           {"nodes", &nodes_section},
                           {"slices", &slices_section}};

// ---------------------------------------------------------------------------------------------------------
// Reporters.

constexpr const char* kLegend =
    "# sources: §x.y = section of REFERENCES.md (../shared/REFERENCES.md) with its provenance tags: [V] "
    "vendor or\n"
    "#          primary source, [P] paper, [S] secondary compilation, [M] third-party measurement;\n"
    "#          derived = computed from such figures; assumed = no published figure (the reason follows);\n"
    "#          left out / not modelled = no published figure, so spmdsim does not use one\n"
    "# units:   TFLOP/s = 1e12 FLOP/s, dense; GiB = 2^30 bytes (vendors' \"GB\" of HBM); GB/s = 1e9 B/s, "
    "per\n"
    "#          direction; us = 1e-6 s\n";

// The value column; a longer value puts its source on the next line, under the sources of the other rows.
constexpr std::size_t kTextWidth = 40;

void write_table(std::ostream& out, const std::vector<Section>& sections) {
  out << "# spmdsim presets: devices, links, nodes and TPU slices with their published figures\n" << kLegend;
  for (const auto& section : sections) {
    out << "\n" << section.name << "\n";
    for (const auto& e : section.entries) {
      out << fmt::format("  {}: {}\n", e.name, e.title);
      for (const auto& r : e.rows) {
        if (r.source.empty())
          out << fmt::format("    {:<18}{}\n", r.label, r.text);
        else if (r.text.size() < kTextWidth)
          out << fmt::format("    {:<18}{:<{}}{}\n", r.label, r.text, kTextWidth, r.source);
        else
          out << fmt::format("    {:<18}{}\n    {:<18}{:<{}}{}\n", r.label, r.text, "", "", kTextWidth,
                             r.source);
      }
    }
  }
}

void write_json(std::ostream& out, const std::vector<Section>& sections) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["command"] = "spmdsim presets";
  j["references"] = "../shared/REFERENCES.md";
  for (const auto& section : sections) {
    auto& list = j[section.name] = nlohmann::ordered_json::array();
    for (const auto& e : section.entries) {
      nlohmann::ordered_json entry;
      entry["name"] = e.name;
      entry["title"] = e.title;
      auto& figures = entry["figures"] = nlohmann::ordered_json::array();
      for (const auto& r : e.rows) {
        nlohmann::ordered_json f;
        f["key"] = r.key;
        f["text"] = r.text;
        f["value"] = r.value ? nlohmann::ordered_json(*r.value) : nlohmann::ordered_json(nullptr);
        f["unit"] = r.unit;
        f["source"] = r.source;
        figures.push_back(std::move(f));
      }
      list.push_back(std::move(entry));
    }
  }
  out << j.dump(2) << "\n";
}

// ---------------------------------------------------------------------------------------------------------
// Options.

struct PresetsOptions {
  std::vector<const Kind*> kinds;
  std::string json_path;
};

std::string valid_kinds() {
  std::vector<std::string_view> names;
  for (const auto& k : kKinds) names.push_back(k.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::optional<PresetsOptions> parse(const std::vector<std::string>& args) {
  PresetsOptions options;
  std::string kind;
  po::options_description described("spmdsim presets options");
  described.add_options()("help,h", "show this help")(
      "kind", po::value(&kind), "list only this kind: devices, links, nodes or slices (default: all)")(
      "json", po::value(&options.json_path), "also write the presets as JSON to this file");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: spmdsim presets [options]\n\n"
              << "The devices, links, nodes and TPU slices spmdsim knows, with every figure and its source\n"
              << "(topologies/src/presets.cpp; docs/presets.md explains them).\n\n"
              << described << "\n";
    return std::nullopt;
  }
  po::notify(vm);
  for (const auto& k : kKinds)
    if (kind.empty() || k.name == kind) options.kinds.push_back(&k);
  if (options.kinds.empty())
    throw UsageError(fmt::format("unknown --kind '{}'; valid: {}", kind, valid_kinds()));
  return options;
}

}  // namespace

int run_presets(const std::string& program, const std::vector<std::string>& args) {
  auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  std::vector<Section> sections;
  for (const auto* kind : parsed->kinds) sections.push_back(kind->make());
  write_table(std::cout, sections);
  if (!parsed->json_path.empty())
    write_file_atomically(parsed->json_path, [&](std::ostream& out) { write_json(out, sections); });
  return 0;
}

}  // namespace spmdsim::cli
