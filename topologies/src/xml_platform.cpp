#include "spmdsim/topologies/xml_platform.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "hostfile.hpp"
#include "spmdsim/errors.hpp"
#include "text_fields.hpp"
#include "xml_platform_check.hpp"

namespace spmdsim::topologies {
namespace {

constexpr std::string_view kIndex = "spmdsim.index";
constexpr std::string_view kMemoryBytes = "spmdsim.memory_bytes";
constexpr std::string_view kPeakFlopsF32 = "spmdsim.peak_flops_f32";
constexpr std::string_view kMemoryBandwidth = "spmdsim.memory_bandwidth";
constexpr std::string_view kDimensions = "spmdsim.dimensions";

// A device's SimGrid speed only converts its roofline time into an amount of work; switch_cluster() uses
// the same value.
constexpr double kDeviceHostSpeed = 1e12;

void check_exists(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    throw ValueError(
        fmt::format("SimGrid platform file '{}' does not exist or is not a regular file", file.string()));
}

std::optional<std::string> property(const simgrid::s4u::Host* host, std::string_view name) {
  const char* value = host->get_property(std::string(name));
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// The whole of `text` as a double ("80e9", "inf"); throws ValueError naming where it came from.
double parse_number(const std::string& text, const std::string& where) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size())
    throw ValueError(fmt::format("{} is '{}', not a number", where, text));
  return value;
}

// Host names in natural order: runs of digits compare as numbers, so dev2 comes before dev10.
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const std::size_t a_start = i;
      const std::size_t b_start = j;
      while (i < a.size() && is_digit(a[i])) ++i;
      while (j < b.size() && is_digit(b[j])) ++j;
      std::string_view a_run = a.substr(a_start, i - a_start);
      std::string_view b_run = b.substr(b_start, j - b_start);
      const auto a_digits = a_run.find_first_not_of('0');
      const auto b_digits = b_run.find_first_not_of('0');
      a_run = a_digits == std::string_view::npos ? std::string_view() : a_run.substr(a_digits);
      b_run = b_digits == std::string_view::npos ? std::string_view() : b_run.substr(b_digits);
      if (a_run.size() != b_run.size()) return a_run.size() < b_run.size();
      if (a_run != b_run) return a_run < b_run;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // equal up to leading zeros: any fixed order
}

// The devices in spmdsim.index order if they have indices, else in natural name order.
std::vector<simgrid::s4u::Host*> order_devices(std::vector<simgrid::s4u::Host*> devices,
                                               const std::string& file) {
  std::vector<simgrid::s4u::Host*> with_index;
  std::vector<simgrid::s4u::Host*> without_index;
  for (auto* host : devices) (property(host, kIndex) ? with_index : without_index).push_back(host);
  std::sort(without_index.begin(), without_index.end(),
            [](const auto* a, const auto* b) { return natural_less(a->get_name(), b->get_name()); });
  if (with_index.empty()) return without_index;
  if (!without_index.empty()) {
    std::vector<std::string> names;
    for (const auto* host : without_index) names.push_back(host->get_name());
    throw ValueError(
        fmt::format("platform '{}': device(s) {} have no {} but other devices have one; number every device "
                    "0..{} or none (then devices go by host name)",
                    file, fmt::join(names, ", "), kIndex, devices.size() - 1));
  }
  const int count = static_cast<int>(devices.size());
  std::vector<simgrid::s4u::Host*> ordered(devices.size(), nullptr);
  for (auto* host : with_index) {
    const std::string text = *property(host, kIndex);
    const auto index = detail::parse_int(text);
    if (!index)
      throw ValueError(fmt::format("platform '{}': device '{}' has {} '{}', not an integer", file,
                                   host->get_name(), kIndex, text));
    // N indices in 0..N-1 without duplicates leave none missing: a gap shows as an index out of range.
    if (*index < 0 || *index >= count)
      throw ValueError(
          fmt::format("platform '{}': device '{}' has {} {}, outside 0..{} (the {} devices are "
                      "numbered from 0 without gaps)",
                      file, host->get_name(), kIndex, *index, count - 1, count));
    auto& slot = ordered[static_cast<std::size_t>(*index)];
    if (slot != nullptr) {
      // Name the pair in a fixed order, whatever order SimGrid lists its hosts in.
      auto first = slot->get_name();
      auto second = host->get_name();
      if (natural_less(second, first)) std::swap(first, second);
      throw ValueError(fmt::format("platform '{}': devices '{}' and '{}' both have {} {}", file, first,
                                   second, kIndex, *index));
    }
    slot = host;
  }
  return ordered;
}

DeviceSpec device_spec(const simgrid::s4u::Host* host, DeviceSpec spec, const std::string& file) {
  const auto where = [&](std::string_view name) {
    return fmt::format("platform '{}': device '{}': {}", file, host->get_name(), name);
  };
  if (auto text = property(host, kMemoryBytes))
    spec.memory_capacity = parse_number(*text, where(kMemoryBytes));
  if (auto text = property(host, kPeakFlopsF32))
    spec.peak_flops[DType::f32] = parse_number(*text, where(kPeakFlopsF32));
  if (auto text = property(host, kMemoryBandwidth))
    spec.memory_bandwidth = parse_number(*text, where(kMemoryBandwidth));
  try {
    spec.validate();
  } catch (const std::invalid_argument& error) {
    throw ValueError(fmt::format("platform '{}': device '{}': {}", file, host->get_name(), error.what()));
  }
  return spec;
}

std::vector<int> parse_dimensions(const std::string& text, std::size_t devices, const std::string& file) {
  std::vector<int> dimensions;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const auto dimension = detail::parse_int(rest.substr(0, comma));
    if (!dimension || *dimension < 1)
      throw ValueError(
          fmt::format("platform '{}': {} is '{}'; expected positive integers separated by commas, "
                      "e.g. \"8,4\"",
                      file, kDimensions, text));
    dimensions.push_back(*dimension);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::size_t product = 1;
  for (int d : dimensions) product *= static_cast<std::size_t>(d);
  if (product != devices)
    throw ValueError(fmt::format("platform '{}': {} '{}' makes {} devices, but the platform has {}", file,
                                 kDimensions, text, product, devices));
  return dimensions;
}

// SimGrid loads a link of zero, negative or NaN bandwidth, a negative latency or a host of no speed, and
// aborts (or goes back in time) at the first transfer or computation over it: refuse them before any runs.
void check_resources(const simgrid::s4u::Engine& engine, const std::string& file) {
  for (const auto* link : engine.get_all_links()) {
    if (!(link->get_bandwidth() > 0) || !std::isfinite(link->get_bandwidth()))
      throw ValueError(
          fmt::format("platform '{}': link '{}' has bandwidth {}; expected a positive finite number", file,
                      link->get_name(), link->get_bandwidth()));
    if (!(link->get_latency() >= 0) || !std::isfinite(link->get_latency()))
      throw ValueError(fmt::format("platform '{}': link '{}' has latency {}; expected a finite number >= 0",
                                   file, link->get_name(), link->get_latency()));
  }
  for (const auto* host : engine.get_all_hosts())
    for (unsigned long pstate = 0; pstate < host->get_pstate_count(); ++pstate) {
      const double speed = host->get_pstate_speed(pstate);
      if (!(speed > 0) || !std::isfinite(speed))
        throw ValueError(
            fmt::format("platform '{}': host '{}' has speed {}; expected a positive finite number", file,
                        host->get_name(), speed));
    }
}

// SimGrid's network model aborts a transfer between two hosts that have no route (no link and no latency);
// Floyd and Dijkstra zones throw when asked for it. Ask for every route the run takes first: from the host
// CPU to each device it uses and back, and between every two of those devices.
void check_routes(const Platform& platform, int devices, const std::string& file) {
  auto* engine = simgrid::s4u::Engine::get_instance();
  engine->seal_platform();
  const auto host = [&](const std::string& name) { return engine->host_by_name(name); };
  const auto check = [&](const std::string& from, const std::string& to) {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    bool routed = false;
    try {
      host(from)->route_to(host(to), links, &latency);
      routed = !links.empty() || latency > 0;
    } catch (const std::exception&) {
    }
    if (!routed)
      throw ValueError(
          fmt::format("platform '{}': no route from '{}' to '{}'; the run uses devices 0..{} and "
                      "needs a route from the host CPU to each of them and back, and between "
                      "every two of them",
                      file, from, to, devices - 1));
  };
  for (int d = 0; d < devices; ++d) {
    const std::string& name = platform.devices[static_cast<std::size_t>(d)].host;
    if (name == platform.host_cpu) continue;  // the host program on a device's host reaches it over loopback
    check(platform.host_cpu, name);
    check(name, platform.host_cpu);
  }
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b)
      if (a != b)
        check(platform.devices[static_cast<std::size_t>(a)].host,
              platform.devices[static_cast<std::size_t>(b)].host);
}

std::string sorted_names(const std::vector<simgrid::s4u::Host*>& hosts) {
  std::vector<std::string> names;
  for (const auto* host : hosts) names.push_back(host->get_name());
  std::sort(names.begin(), names.end(), natural_less);
  return fmt::format("{}", fmt::join(names, ", "));
}

// The hosts of each role (a host of another role value is refused; one without the property is not ours).
struct Roles {
  std::vector<simgrid::s4u::Host*> devices;
  std::vector<simgrid::s4u::Host*> cpus;
};

Roles read_roles(const simgrid::s4u::Engine& engine, const XmlPlatformOptions& options,
                 const std::string& file) {
  Roles roles;
  for (auto* host : engine.get_all_hosts()) {
    const auto role = property(host, options.role_property);
    if (!role) continue;
    if (*role == options.device_role)
      roles.devices.push_back(host);
    else if (*role == options.host_role)
      roles.cpus.push_back(host);
    else
      throw ValueError(fmt::format("platform '{}': host '{}' has {}='{}'; expected '{}' or '{}'", file,
                                   host->get_name(), options.role_property, *role, options.device_role,
                                   options.host_role));
  }
  return roles;
}

// The host the options name, else the one host of the host role; nullptr where there is none and device 0's
// host may run the host program.
simgrid::s4u::Host* choose_host_cpu(const simgrid::s4u::Engine& engine, const Roles& roles,
                                    const XmlPlatformOptions& options, const std::string& file) {
  if (!options.host_cpu.empty()) {
    auto* host = engine.host_by_name_or_null(options.host_cpu);
    if (host == nullptr)
      throw ValueError(
          fmt::format("platform '{}' has no host '{}' to run the host program", file, options.host_cpu));
    return host;
  }
  if (roles.cpus.empty() && options.host_on_first_device) return nullptr;
  if (roles.cpus.empty())
    throw ValueError(fmt::format(
        "platform '{}' has no host CPU: no host has the property {}={}; mark one, or name it (--host-cpu)",
        file, options.role_property, options.host_role));
  if (roles.cpus.size() > 1)
    throw ValueError(fmt::format("platform '{}' has {} host CPUs ({}={} on {}); mark exactly one", file,
                                 roles.cpus.size(), options.role_property, options.host_role,
                                 sorted_names(roles.cpus)));
  return roles.cpus.front();
}

// The devices of the role, in index or name order.
std::vector<simgrid::s4u::Host*> devices_by_role(const Roles& roles, const simgrid::s4u::Host* cpu,
                                                 const XmlPlatformOptions& options, const std::string& file) {
  if (roles.devices.empty())
    throw ValueError(fmt::format("platform '{}' has no device: no host has the property {}={}", file,
                                 options.role_property, options.device_role));
  if (cpu != nullptr && std::find(roles.devices.begin(), roles.devices.end(), cpu) != roles.devices.end())
    throw ValueError(fmt::format("platform '{}': host '{}' is named the host CPU but has {}={}", file,
                                 cpu->get_name(), options.role_property, options.device_role));
  return order_devices(roles.devices, file);
}

// The hosts of the hostfile's lines, in order.
std::vector<simgrid::s4u::Host*> devices_by_hostfile(const simgrid::s4u::Engine& engine,
                                                     const std::vector<detail::HostfileEntry>& hostfile,
                                                     const simgrid::s4u::Host* cpu,
                                                     const XmlPlatformOptions& options,
                                                     const std::string& file) {
  std::vector<simgrid::s4u::Host*> devices;
  for (const auto& entry : hostfile) {
    auto* host = engine.host_by_name_or_null(entry.host);
    const auto where = fmt::format("hostfile '{}', line {}", options.hostfile.string(), entry.line);
    if (host == nullptr)
      throw ValueError(fmt::format("{}: platform '{}' has no host '{}'", where, file, entry.host));
    if (host == cpu)
      throw ValueError(
          fmt::format("{}: '{}' is the host CPU, which runs the host program; a device needs a "
                      "host of its own",
                      where, entry.host));
    devices.push_back(host);
  }
  return devices;
}

Platform load(const std::filesystem::path& path, const XmlPlatformOptions& options,
              const std::vector<detail::HostfileEntry>& hostfile) {
  check_exists(path);
  const std::string file = path.string();
  auto* engine = simgrid::s4u::Engine::get_instance();
  try {
    engine->load_platform(file);
  } catch (const std::exception& error) {
    throw ValueError(fmt::format("SimGrid cannot load platform '{}': {}", file, error.what()));
  }
  check_resources(*engine, file);

  const Roles roles = read_roles(*engine, options, file);
  const auto* cpu = choose_host_cpu(*engine, roles, options, file);
  const auto devices = hostfile.empty() ? devices_by_role(roles, cpu, options, file)
                                        : devices_by_hostfile(*engine, hostfile, cpu, options, file);
  Platform platform;
  platform.host_cpu = (cpu != nullptr ? cpu : devices.front())->get_name();
  for (auto* host : devices)
    platform.devices.push_back({host->get_name(), host->get_name(), device_spec(host, options.device, file)});
  if (const char* dimensions = engine->get_netzone_root()->get_property(std::string(kDimensions)))
    platform.dimensions = parse_dimensions(dimensions, platform.devices.size(), file);
  std::vector<std::string> notes;
  if (!hostfile.empty()) notes.push_back(fmt::format("hostfile {}", options.hostfile.filename().string()));
  if (cpu == nullptr) notes.push_back(fmt::format("host program on device 0's host {}", platform.host_cpu));
  const std::string noted = notes.empty() ? std::string() : fmt::format(" ({})", fmt::join(notes, "; "));
  platform.description = fmt::format("xml: {}{}, {} x {}", path.filename().string(), noted,
                                     platform.devices.size(), options.device.model);
  const int count = static_cast<int>(platform.devices.size());
  check_routes(platform, options.devices_used > 0 ? std::min(options.devices_used, count) : count, file);
  return platform;
}

}  // namespace

PlatformBuilder xml_platform(std::filesystem::path file, XmlPlatformOptions options) {
  // Now, so a command line fails before it starts an engine, and before SimGrid aborts on the file.
  check_exists(file);
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  detail::check_platform_declarations(text.str(), file.string());
  auto hostfile = options.hostfile.empty() ? std::vector<detail::HostfileEntry>()
                                           : detail::read_hostfile(options.hostfile);
  return [file = std::move(file), options = std::move(options), hostfile = std::move(hostfile)] {
    return load(file, options, hostfile);
  };
}

void write_switch_cluster_xml(std::ostream& out, const SwitchClusterSpec& spec) {
  (void)switch_cluster(spec);  // the same checks as the builder, with the same messages; builds nothing yet
  // fmt's "{}" writes a double's shortest exact representation, so the file holds the spec's values exactly.
  out << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- spmdsim switch cluster: host -> dev i over dev i.pcie.h2d, dev i -> host over dev "
         "i.pcie.d2h,\n"
         "     dev i -> dev j over dev i.fabric.up then dev j.fabric.down (see switch_cluster.hpp). -->\n"
         "<platform version=\"4.1\">\n"
         "  <zone id=\"switch_cluster\" routing=\"Full\">\n";
  out << fmt::format("    <host id=\"host\" speed=\"{}f\">\n", spec.host_speed)
      << "      <prop id=\"spmdsim.role\" value=\"host\"/>\n"
         "    </host>\n";
  const double f32_peak = spec.device.peak_flops_for(DType::f32);
  for (int i = 0; i < spec.num_devices; ++i) {
    out << fmt::format("    <host id=\"dev{}\" speed=\"{}f\">\n", i, kDeviceHostSpeed)
        << "      <prop id=\"spmdsim.role\" value=\"device\"/>\n"
        << fmt::format("      <prop id=\"{}\" value=\"{}\"/>\n", kIndex, i)
        << fmt::format("      <prop id=\"{}\" value=\"{}\"/>\n", kMemoryBytes, spec.device.memory_capacity)
        << fmt::format("      <prop id=\"{}\" value=\"{}\"/>\n", kPeakFlopsF32, f32_peak)
        << fmt::format("      <prop id=\"{}\" value=\"{}\"/>\n", kMemoryBandwidth,
                       spec.device.memory_bandwidth)
        << "    </host>\n";
  }
  auto link = [&out](const std::string& name, const LinkSpec& link_spec) {
    out << fmt::format("    <link id=\"{}\" bandwidth=\"{}Bps\" latency=\"{}s\"/>\n", name,
                       link_spec.bandwidth, link_spec.latency);
  };
  for (int i = 0; i < spec.num_devices; ++i) {
    link(fmt::format("dev{}.pcie.h2d", i), spec.host_link);
    link(fmt::format("dev{}.pcie.d2h", i), spec.host_link);
    link(fmt::format("dev{}.fabric.up", i), spec.device_link);
    link(fmt::format("dev{}.fabric.down", i), spec.device_link);
  }
  auto route = [&out](const std::string& src, const std::string& dst,
                      std::initializer_list<std::string> links) {
    out << fmt::format("    <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">", src, dst);
    for (const auto& name : links) out << fmt::format("<link_ctn id=\"{}\"/>", name);
    out << "</route>\n";
  };
  for (int i = 0; i < spec.num_devices; ++i) {
    const std::string dev = fmt::format("dev{}", i);
    route("host", dev, {dev + ".pcie.h2d"});
    route(dev, "host", {dev + ".pcie.d2h"});
  }
  for (int i = 0; i < spec.num_devices; ++i)
    for (int j = 0; j < spec.num_devices; ++j)
      if (i != j)
        route(fmt::format("dev{}", i), fmt::format("dev{}", j),
              {fmt::format("dev{}.fabric.up", i), fmt::format("dev{}.fabric.down", j)});
  out << "  </zone>\n"
         "</platform>\n";
}

}  // namespace spmdsim::topologies
