#include "common/platform_options.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options/value_semantic.hpp>

#include "common/command_line.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/simulation.hpp"
#include "spmdsim/topologies/dragonfly.hpp"
#include "spmdsim/topologies/fat_tree.hpp"
#include "spmdsim/topologies/full_mesh.hpp"
#include "spmdsim/topologies/presets.hpp"
#include "spmdsim/topologies/ring.hpp"
#include "spmdsim/topologies/switch_cluster.hpp"
#include "spmdsim/topologies/torus.hpp"
#include "spmdsim/topologies/xml_platform.hpp"

namespace spmdsim::cli {
namespace {

namespace po = boost::program_options;

// A device preset on a --topology: the device with the links it has in the node or slice preset built of it
// (a100: dgx_a100's NVLink port and PCIe link; tpu_v4: tpu_v4_4x4x4's ICI cable), so that a device has the
// same figures on every topology. Every cable and switch link of the topology runs at that device link.
struct DeviceOnTopology {
  DeviceSpec device;
  topologies::LinkSpec device_link;
  topologies::LinkSpec host_link;
  std::string_view home;  // the node or slice preset the links come from
  const topologies::NetworkModel* network_model;
};

DeviceOnTopology device_on_topology(const topologies::DevicePreset& preset) {
  for (const auto& node : topologies::node_presets())
    if (node.device == preset.name) {
      const auto spec = node.spec();
      return {spec.device, spec.device_link, spec.host_link, node.name, node.network_model};
    }
  for (const auto& slice : topologies::slice_presets())
    if (slice.device == preset.name) {
      const auto spec = slice.spec();
      return {spec.device, spec.device_link, spec.host_link, slice.name, slice.network_model};
    }
  throw std::logic_error(
      fmt::format("device preset '{}' is in no node or slice preset: its links are unknown", preset.name));
}

// ---------------------------------------------------------------------------------------------------------
// The topologies. Adding one is a row in kTopologies.

// A topology for a device count: its builder, its size and its parameters as chosen ("4x2").
struct BuiltTopology {
  PlatformBuilder builder;
  int num_devices = 0;
  std::string parameters;
};

struct Topology {
  std::string_view name;
  std::string_view parameters;  // the form of what may follow "name:"; empty: nothing may
  std::string_view description;
  // `parameters` is what followed "name:", empty when nothing did: the row then chooses from `devices`.
  // Throws UsageError for parameters of the wrong form, the builder's ValueError for figures it refuses.
  BuiltTopology (*build)(int devices, std::string_view parameters, const DeviceOnTopology& on);
};

// `count` whole numbers multiplying to n, largest first, as close to one another as they can be (the least
// largest / smallest): 8 -> 4x2 or 2x2x2, 64 -> 8x8 or 4x4x4, a prime 7 -> 7x1.
std::vector<int> balanced_factors(int n, int count) {
  std::vector<int> best;
  std::vector<int> current;
  const std::function<void(int, int)> extend = [&](int rest, int largest) {
    if (static_cast<int>(current.size()) + 1 == count) {
      if (rest > largest) return;
      current.push_back(rest);
      if (best.empty() || current.front() * best.back() < best.front() * current.back()) best = current;
      current.pop_back();
      return;
    }
    for (int factor = std::min(rest, largest); factor >= 1; --factor)
      if (rest % factor == 0) {
        current.push_back(factor);
        extend(rest / factor, factor);
        current.pop_back();
      }
  };
  extend(n, n);
  return best;
}

// "4x2" -> {4, 2}. Throws UsageError "expected <form>" unless `text` is whole numbers joined by 'x' that
// multiply to at most kMaxDevices.
std::vector<int> dimensions_of(std::string_view text, std::string_view form) {
  const auto bad = [&] { return UsageError(fmt::format("expected {}", form)); };
  std::vector<int> dimensions;
  std::int64_t product = 1;
  for (;;) {
    const auto end = text.find('x');
    const auto item = text.substr(0, end);
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string_view::npos)
      throw bad();
    dimensions.push_back(std::stoi(std::string(item)));
    product *= dimensions.back();
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  if (product > kMaxDevices)
    throw UsageError(fmt::format("{} devices, more than the {} a command runs on", product, kMaxDevices));
  return dimensions;
}

int product_of(const std::vector<int>& dimensions) {
  int product = 1;
  for (int d : dimensions) product *= d;
  return product;
}

// The builders that take no parameters: a device count, the device, its device link and host link.
template <class Spec, PlatformBuilder (*build)(Spec)>
BuiltTopology build_unparameterised(int devices, std::string_view, const DeviceOnTopology& on) {
  Spec spec;
  spec.num_devices = devices;
  spec.device = on.device;
  spec.device_link = on.device_link;
  spec.host_link = on.host_link;
  return {build(std::move(spec)), devices, ""};
}

BuiltTopology build_grid(int devices, std::string_view parameters, const DeviceOnTopology& on,
                         bool wraparound) {
  const auto shape =
      parameters.empty() ? balanced_factors(devices, 2) : dimensions_of(parameters, "XxY or XxYxZ, e.g. 4x4");
  return {topologies::torus({.num_devices = product_of(shape),
                             .shape = shape,
                             .wraparound = wraparound,
                             .device = on.device,
                             .device_link = on.device_link,
                             .host_link = on.host_link}),
          product_of(shape), fmt::format("{}", fmt::join(shape, "x"))};
}

BuiltTopology build_torus(int devices, std::string_view parameters, const DeviceOnTopology& on) {
  return build_grid(devices, parameters, on, true);
}

BuiltTopology build_mesh(int devices, std::string_view parameters, const DeviceOnTopology& on) {
  return build_grid(devices, parameters, on, false);
}

// Two levels when k^2 ports hold the devices, three otherwise; k chosen: the least that two levels allow.
BuiltTopology build_fat_tree(int devices, std::string_view parameters, const DeviceOnTopology& on) {
  int k = 2;
  if (parameters.empty()) {
    while (k * k < devices) ++k;
  } else {
    if (parameters.size() > 4 || parameters.find_first_not_of("0123456789") != std::string_view::npos)
      throw UsageError("expected K, the ports down (and up) of every switch, e.g. 8");
    k = std::stoi(std::string(parameters));
  }
  return {topologies::fat_tree({.num_devices = devices,
                                .levels = devices <= k * k ? 2 : 3,
                                .k = k,
                                .device = on.device,
                                .device_link = on.device_link,
                                .switch_link = on.device_link,
                                .host_link = on.host_link}),
          devices, fmt::format("{}", k)};
}

BuiltTopology build_dragonfly(int devices, std::string_view parameters, const DeviceOnTopology& on) {
  constexpr std::string_view kForm = "GxAxD (groups x routers per group x devices per router), e.g. 4x4x2";
  const auto shape = parameters.empty() ? balanced_factors(devices, 3) : dimensions_of(parameters, kForm);
  if (shape.size() != 3) throw UsageError(fmt::format("expected {}", kForm));
  return {topologies::dragonfly({.num_groups = shape[0],
                                 .routers_per_group = shape[1],
                                 .devices_per_router = shape[2],
                                 .device = on.device,
                                 .device_link = on.device_link,
                                 .local_link = on.device_link,
                                 .global_link = on.device_link,
                                 .host_link = on.host_link}),
          product_of(shape), fmt::format("{}", fmt::join(shape, "x"))};
}

constexpr auto build_switch =
    &build_unparameterised<topologies::SwitchClusterSpec, &topologies::switch_cluster>;
constexpr auto build_ring = &build_unparameterised<topologies::RingSpec, &topologies::ring>;
constexpr auto build_full_mesh = &build_unparameterised<topologies::FullMeshSpec, &topologies::full_mesh>;

constexpr Topology kTopologies[] = {
    {"switch", "", "every device on one non-blocking switch", build_switch},
    {"ring", "", "each device cabled to the next, the last to the first", build_ring},
    {"full_mesh", "", "a cable between every pair of devices", build_full_mesh},
    {"torus", "XxY|XxYxZ", "a 2D or 3D torus; default: the squarest 2D shape of the devices", &build_torus},
    {"mesh", "XxY|XxYxZ", "a torus without the wraparound cables; same default", &build_mesh},
    {"fat_tree", "K",
     "switches of K ports down and up, 2 levels if K^2 ports hold the devices, else 3; "
     "default: the least K for 2 levels",
     &build_fat_tree},
    {"dragonfly", "GxAxD", "G groups of A all-to-all routers of D devices; default: the most even shape",
     &build_dragonfly},
};

std::string topology_form(const Topology& t) {
  return t.parameters.empty() ? std::string(t.name) : fmt::format("{}[:{}]", t.name, t.parameters);
}

const Topology& find_topology(std::string_view name) {
  for (const auto& t : kTopologies)
    if (t.name == name) return t;
  std::vector<std::string> valid;
  for (const auto& t : kTopologies) valid.push_back(topology_form(t));
  throw UsageError(fmt::format("unknown --topology '{}'; valid: {}", name, fmt::join(valid, ", ")));
}

// ---------------------------------------------------------------------------------------------------------
// The presets: a device goes on a --topology; a node or TPU slice is a whole platform.

constexpr std::string_view kDefaultPreset = "a100";

template <class Preset>
const Preset* find_in(const std::vector<Preset>& table, std::string_view name) {
  for (const auto& p : table)
    if (p.name == name) return &p;
  return nullptr;
}

std::string names_text(topologies::PresetKind kind) {
  return fmt::format("{}", fmt::join(topologies::preset_names(kind), ", "));
}

void check_fits(int devices, int available, const std::string& platform, std::string_view hint = "") {
  if (devices > available)
    throw UsageError(
        fmt::format("--devices {} is more than the {} devices of {}{}", devices, available, platform, hint));
}

// A node or slice preset is the platform: nothing else may say what the platform is.
void check_whole_platform(const PlatformRequest& request, std::string_view preset, std::string_view kind,
                          std::string_view device) {
  if (!request.topology.empty())
    throw UsageError(fmt::format(
        "--topology cannot be given with --preset {}: a {} preset is a whole platform (--preset {} puts its "
        "devices on a --topology)",
        preset, kind, device));
  if (!request.platform_file.empty())
    throw UsageError(fmt::format(
        "--platform cannot be given with --preset {}: a {} preset is a whole platform", preset, kind));
}

int node_count(const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) < 1 || std::stoi(text) > kMaxDevices)
    throw UsageError(fmt::format("--nodes: '{}' is not a node count from 1 to {}", text, kMaxDevices));
  return std::stoi(text);
}

ChosenPlatform node_platform(const topologies::NodePreset& preset, const PlatformRequest& request,
                             int devices) {
  check_whole_platform(request, preset.name, "node", preset.device);
  ChosenPlatform chosen{.preset = std::string(preset.name),
                        .simgrid_config = preset.network_model->simgrid_config,
                        .network_model_source = fmt::format("{}'s network model", preset.name)};
  const int nodes = request.nodes.empty() ? 1 : node_count(request.nodes);
  if (nodes == 1) {
    chosen.builder = topologies::node_platform(preset);
    chosen.num_devices = preset.devices_per_node;
    chosen.summary = fmt::format("--preset {}", preset.name);
    check_fits(devices, chosen.num_devices, chosen.summary, " (--nodes N joins N of them)");
    return chosen;
  }
  try {
    chosen.builder = topologies::multi_node_cluster(topologies::library_cluster_spec(preset.spec(), nodes));
  } catch (const ValueError& e) {
    throw UsageError(fmt::format("--nodes {}: {}", nodes, e.what()));
  }
  chosen.num_devices = nodes * preset.devices_per_node;
  chosen.nodes = nodes;
  chosen.summary = fmt::format("--preset {}, --nodes {}", preset.name, nodes);
  check_fits(devices, chosen.num_devices, chosen.summary);
  return chosen;
}

ChosenPlatform slice_platform(const topologies::SlicePreset& preset, const PlatformRequest& request,
                              int devices) {
  check_whole_platform(request, preset.name, "TPU slice", preset.device);
  if (!request.nodes.empty())
    throw UsageError(fmt::format("--nodes joins nodes of a node preset ({}); --preset {} is a TPU slice",
                                 names_text(topologies::PresetKind::node), preset.name));
  ChosenPlatform chosen{.builder = topologies::slice_platform(preset),
                        .num_devices = product_of(preset.shape),
                        .preset = std::string(preset.name),
                        .summary = fmt::format("--preset {}", preset.name),
                        .simgrid_config = preset.network_model->simgrid_config,
                        .network_model_source = fmt::format("{}'s network model", preset.name)};
  check_fits(devices, chosen.num_devices, chosen.summary);
  return chosen;
}

ChosenPlatform device_platform(const topologies::DevicePreset& preset, const PlatformRequest& request,
                               int devices, HostCpuNeed host_cpu) {
  if (!request.nodes.empty())
    throw UsageError(fmt::format("--nodes joins nodes of a node preset ({}); --preset {} is a device",
                                 names_text(topologies::PresetKind::node), preset.name));
  if (!request.platform_file.empty()) {
    // SimGrid's own settings: the file's links are not the preset's.
    ChosenPlatform chosen{.preset = std::string(preset.name),
                          .platform_file = request.platform_file,
                          .hostfile = request.hostfile};
    std::vector<std::string> given{"--platform " + request.platform_file};
    if (!request.hostfile.empty()) given.push_back("--hostfile " + request.hostfile);
    if (!request.host_cpu.empty()) given.push_back("--host-cpu " + request.host_cpu);
    chosen.summary = fmt::format("{}, --preset {}", fmt::join(given, ", "), preset.name);
    try {
      chosen.builder = topologies::xml_platform(
          request.platform_file, {.device = preset.spec(),
                                  .devices_used = devices,
                                  .hostfile = request.hostfile,
                                  .host_cpu = request.host_cpu,
                                  .host_on_first_device = host_cpu == HostCpuNeed::first_device_if_none});
    } catch (const ValueError& e) {
      throw UsageError(fmt::format("--platform: {}", e.what()));
    }
    return chosen;
  }
  const auto on = device_on_topology(preset);
  const std::string given = request.topology.empty() ? std::string("switch") : request.topology;
  const auto colon = given.find(':');
  const Topology& topology = find_topology(std::string_view(given).substr(0, colon));
  const std::string_view parameters =
      colon == std::string::npos ? std::string_view() : std::string_view(given).substr(colon + 1);
  if (colon != std::string::npos && topology.parameters.empty())
    throw UsageError(fmt::format("--topology {}: {} takes no parameters", given, topology.name));
  BuiltTopology built;
  try {
    built = topology.build(devices, parameters, on);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--topology {}: {}", given, e.what()));
  } catch (const ValueError& e) {
    throw UsageError(fmt::format("--topology {}: {}", given, e.what()));
  }
  ChosenPlatform chosen{.builder = std::move(built.builder),
                        .num_devices = built.num_devices,
                        .topology = built.parameters.empty()
                                        ? std::string(topology.name)
                                        : fmt::format("{}:{}", topology.name, built.parameters),
                        .preset = std::string(preset.name),
                        .simgrid_config = on.network_model->simgrid_config,
                        .network_model_source = fmt::format("{}'s network model", on.home)};
  chosen.summary =
      fmt::format("--topology {}, --preset {} with {}'s links", chosen.topology, preset.name, on.home);
  check_fits(devices, chosen.num_devices, fmt::format("--topology {}", chosen.topology));
  return chosen;
}

}  // namespace

void add_platform_options(po::options_description& options, PlatformRequest& request) {
  std::vector<std::string> forms;
  for (const auto& t : kTopologies) forms.push_back(fmt::format("{} ({})", topology_form(t), t.description));
  const auto topology_help = fmt::format(
      "where the devices of a device --preset are, built for the largest --devices (default: switch): {}",
      fmt::join(forms, "; "));
  const auto preset_help = fmt::format(
      "a device to put on --topology ({}), or a whole platform: a node ({}) or a TPU slice ({}); "
      "`spmdsim presets` lists their figures",
      names_text(topologies::PresetKind::device), names_text(topologies::PresetKind::node),
      names_text(topologies::PresetKind::slice));
  options.add_options()("topology", po::value(&request.topology), topology_help.c_str())(
      "preset", po::value(&request.preset)->default_value(std::string(kDefaultPreset)), preset_help.c_str())(
      "nodes", po::value(&request.nodes),
      "with a node preset: this many nodes, NIC k of every node on rail switch k (default: 1)")(
      "platform", po::value(&request.platform_file),
      "a SimGrid XML platform file instead of --topology (devices marked as docs/platforms.md says)")(
      "hostfile", po::value(&request.hostfile),
      "with --platform: an SMPI hostfile (smpirun -hostfile) whose i-th line is device i's host")(
      "host-cpu", po::value(&request.host_cpu),
      "with --platform: the host that runs the host program (default: the one marked spmdsim.role=host)");
}

namespace {

// The torus algorithms run 2 parts per dimension at once, each on a channel of its own: at most 6 on the
// 3-D tori of the builders and slices.
constexpr int kMaxTorusParts = 6;

const topologies::NodePreset* chosen_node_preset(const ChosenPlatform& platform) {
  if (!platform.topology.empty() || !platform.platform_file.empty()) return nullptr;
  return find_in(topologies::node_presets(), platform.preset);
}

}  // namespace

CollectiveLibrary collective_library(const ChosenPlatform& platform) {
  if (const auto* node = chosen_node_preset(platform)) return node->collective_library();
  Platform built;  // what the topology's (or slice's) builder sets of it
  built.full_mesh_nodes = platform.topology == "full_mesh";
  const bool slice = platform.topology.empty() && platform.platform_file.empty() &&
                     find_in(topologies::slice_presets(), platform.preset) != nullptr;
  built.torus = slice || platform.topology.starts_with("torus") || platform.topology.starts_with("mesh");
  return spmdsim::collective_library(built);
}

int collective_channels(const ChosenPlatform& platform, const std::string& algorithm) {
  const CollectiveLibrary library = collective_library(platform);
  const std::string runs =
      algorithm.empty() ? std::string(default_algorithm(CollectiveKind::all_reduce, library)) : algorithm;
  const bool nccl = library == CollectiveLibrary::nccl;
  const bool rccl = library == CollectiveLibrary::rccl;
  if (runs == "torus") return kMaxTorusParts;
  if (runs != "nccl_ring" && !((nccl || rccl) && runs == "nccl")) return 1;
  const auto* node = chosen_node_preset(platform);
  const auto figures = nccl ? topologies::platform_nccl(node->spec()) : std::nullopt;
  return default_ring_channels(figures ? &*figures : nullptr,
                               rccl || library == CollectiveLibrary::mesh_channel_rings,
                               platform.nodes > 1 ? node->devices_per_node : platform.num_devices,
                               platform.nodes);
}

ChosenPlatform choose_platform(const PlatformRequest& request, int devices, HostCpuNeed host_cpu) {
  if (!request.platform_file.empty() && !request.topology.empty())
    throw UsageError("--platform and --topology exclude each other: the file is the topology");
  for (const auto& [option, value] :
       {std::pair{"--hostfile", &request.hostfile}, {"--host-cpu", &request.host_cpu}})
    if (!value->empty() && request.platform_file.empty())
      throw UsageError(fmt::format("{} names hosts of a --platform file; give --platform too", option));
  const std::string name = request.preset.empty() ? std::string(kDefaultPreset) : request.preset;
  if (const auto* node = find_in(topologies::node_presets(), name))
    return node_platform(*node, request, devices);
  if (const auto* slice = find_in(topologies::slice_presets(), name))
    return slice_platform(*slice, request, devices);
  if (const auto* device = find_in(topologies::device_presets(), name))
    return device_platform(*device, request, devices, host_cpu);
  throw UsageError(fmt::format("unknown --preset '{}'; valid: devices {}; nodes {}; TPU slices {}", name,
                               names_text(topologies::PresetKind::device),
                               names_text(topologies::PresetKind::node),
                               names_text(topologies::PresetKind::slice)));
}

std::vector<std::pair<std::string, std::string>> simgrid_settings() {
  return simgrid_network_settings();
}

std::string simgrid_source(const ChosenPlatform& chosen, const std::vector<std::string>& simgrid_args) {
  std::vector<std::string> given;
  for (const auto& setting : cfg_settings(simgrid_args))
    given.push_back(setting.substr(0, setting.find(':')));
  const std::string source =
      chosen.network_model_source.empty() ? std::string("SimGrid's defaults") : chosen.network_model_source;
  return given.empty() ? source : fmt::format("{}; --cfg for {}", source, fmt::join(given, ", "));
}

void add_platform_json(nlohmann::ordered_json& j, const ChosenPlatform& chosen,
                       const std::string& description,
                       const std::vector<std::pair<std::string, std::string>>& settings,
                       const std::vector<std::string>& simgrid_args) {
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
  };
  j["platform"] = description;
  j["topology"] = text_or_null(chosen.topology);
  j["platform_file"] = text_or_null(chosen.platform_file);
  j["hostfile"] = text_or_null(chosen.hostfile);
  j["preset"] = chosen.preset;
  j["nodes"] = chosen.nodes == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(chosen.nodes);
  j["simgrid_config"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : settings) j["simgrid_config"][key] = value;
  j["simgrid_source"] = simgrid_source(chosen, simgrid_args);
  j["simgrid_args"] = simgrid_args;
}

}  // namespace spmdsim::cli
