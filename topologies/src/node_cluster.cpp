#include "node_cluster.hpp"

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Host.hpp>

#include "builder_support.hpp"
#include "fabric_model.hpp"
#include "path_zone.hpp"
#include "spmdsim/errors.hpp"
#include "spmdsim/topologies/full_mesh.hpp"

namespace spmdsim::topologies::detail {
namespace {

using Kind = ClusterLinkKind;

// Routes of one cluster shape, written as the rules in accelerator_node.hpp read.
class Router {
 public:
  Router(const ClusterShape& shape, std::vector<ClusterLink>& route)
      : shape_(shape), d_(shape.devices_per_node), route_(route) {}

  void route(int from, int to) {
    if (from == to) return;
    if (const int n = shape_.switch_node(from); n >= 0) return switch_port(n, to, Kind::fabric_down);
    if (const int n = shape_.switch_node(to); n >= 0) return switch_port(n, from, Kind::fabric_up);
    if (from < 0 && to < 0) {  // CPU to CPU: through device 0 of both nodes
      const int n = cpu_node(from);
      const int m = cpu_node(to);
      from_cpu(n, n * d_);
      devices(n * d_, m * d_);
      to_cpu(m * d_, m);
    } else if (from < 0) {
      const int n = cpu_node(from);
      const int relay = n * d_ + to % d_;  // to itself when it is on node n
      from_cpu(n, relay);
      devices(relay, to);
    } else if (to < 0) {
      const int m = cpu_node(to);
      const int relay = m * d_ + from % d_;
      devices(from, relay);
      to_cpu(relay, m);
    } else {
      devices(from, to);
    }
  }

 private:
  static int cpu_node(int endpoint) { return -1 - endpoint; }
  void add(Kind kind, int index) { route_.push_back({kind, index}); }

  // The reducing switch of `node` reaches its own node's devices only, over their switch ports.
  void switch_port(int node, int device, Kind port) {
    if (device < 0 || device / d_ != node)
      throw std::logic_error(fmt::format("no route between node {}'s switch and endpoint {}", node, device));
    add(port, device);
  }

  void from_cpu(int node, int device) {
    if (shape_.host_memory) add(Kind::host_memory, node);
    add(Kind::pcie_h2d, device);
  }
  void to_cpu(int device, int node) {
    add(Kind::pcie_d2h, device);
    if (shape_.host_memory) add(Kind::host_memory, node);
  }

  void devices(int a, int b) {
    if (a == b) return;
    if (a / d_ == b / d_) fabric(a, b);
    else network(a, b);
  }

  // Two devices of one node.
  void fabric(int a, int b) {
    if (shape_.fabric == NodeFabric::nvswitch) {
      add(Kind::fabric_up, a);
      add(Kind::fabric_down, b);
    } else {
      add(Kind::pair, a * d_ + b % d_);  // (n * d + a') * d + b'
    }
  }

  // Two devices of different nodes.
  void network(int a, int b) {
    const int source_node = a / d_;
    const int node = b / d_;
    const int source_rail = a % d_;
    const int rail = b % d_;
    const int spines = shape_.num_spines();
    if (shape_.network == ScaleOutNetwork::fat_tree) {
      const int per_leaf = shape_.nodes_per_leaf;
      const int source_leaf = source_node / per_leaf;
      const int leaf = node / per_leaf;
      add(Kind::nic_up, a);
      if (source_leaf != leaf) {
        const int spine = (node % per_leaf) * d_ + rail;  // D-mod-k: the destination's port on its leaf
        add(Kind::spine_up, source_leaf * spines + spine);
        add(Kind::spine_down, leaf * spines + spine);
      }
      add(Kind::nic_down, b);
      return;
    }
    if (source_rail == rail) {
      add(Kind::nic_up, a);
    } else if (shape_.rail_crossing == RailCrossing::nvlink_first) {
      const int relay = source_node * d_ + rail;  // the source node's device on the destination's rail
      fabric(a, relay);
      add(Kind::nic_up, relay);
    } else {
      add(Kind::nic_up, a);
      add(Kind::spine_up, source_rail * spines + node);  // spine = destination node
      add(Kind::spine_down, rail * spines + node);
    }
    add(Kind::nic_down, b);
  }

  const ClusterShape& shape_;
  const int d_;
  std::vector<ClusterLink>& route_;
};

}  // namespace

int ClusterShape::switch_node(int endpoint) const {
  const int node = -1 - num_nodes - endpoint;
  return reducing_switch && node >= 0 && node < num_nodes ? node : -1;
}

int ClusterShape::num_edge_switches() const {
  if (lone_node) return 0;
  if (network == ScaleOutNetwork::fat_tree) return (num_nodes + nodes_per_leaf - 1) / nodes_per_leaf;
  return devices_per_node;
}

int ClusterShape::num_spines() const {
  if (lone_node) return 0;
  if (network == ScaleOutNetwork::fat_tree)  // a single leaf needs none
    return num_edge_switches() > 1 ? nodes_per_leaf * devices_per_node : 0;
  if (rail_crossing == RailCrossing::spine) return num_nodes > 1 ? num_nodes : 0;
  return 0;
}

void cluster_route(const ClusterShape& shape, int from, int to, std::vector<ClusterLink>& route) {
  Router(shape, route).route(from, to);
}

std::string cluster_link_name(const ClusterShape& shape, ClusterLink link) {
  const int d = shape.devices_per_node;
  auto prefix = [&](int node) { return shape.lone_node ? std::string() : fmt::format("node{}.", node); };
  auto device = [&](int index) { return fmt::format("{}dev{}", prefix(index / d), index % d); };
  auto spine_link = [&](const char* direction) {
    const int spines = shape.num_spines();
    const char* edge = shape.network == ScaleOutNetwork::fat_tree ? "leaf" : "rail";
    return fmt::format("{}{}-spine{}.{}", edge, link.index / spines, link.index % spines, direction);
  };
  switch (link.kind) {
    case Kind::host_memory: return prefix(link.index) + "hostmem";
    case Kind::pcie_h2d: return device(link.index) + ".pcie.h2d";
    case Kind::pcie_d2h: return device(link.index) + ".pcie.d2h";
    case Kind::fabric_up: return device(link.index) + ".fabric.up";
    case Kind::fabric_down: return device(link.index) + ".fabric.down";
    case Kind::pair: {
      const int from = link.index / d;  // global device a
      return fmt::format("{}-dev{}", device(from), link.index % d);
    }
    case Kind::nic_up: return device(link.index) + ".nic.up";
    case Kind::nic_down: return device(link.index) + ".nic.down";
    case Kind::spine_up: return spine_link("up");
    case Kind::spine_down: return spine_link("down");
  }
  return "?";
}

std::vector<std::string> cluster_route_names(const ClusterShape& shape, int from, int to) {
  std::vector<ClusterLink> links;
  cluster_route(shape, from, to, links);
  std::vector<std::string> names;
  for (const auto& link : links) names.push_back(cluster_link_name(shape, link));
  return names;
}

std::string host_memory_text(const NodeSpec& node) {
  return node.host_memory_bandwidth > 0 ? fmt::format("{:g} GB/s", node.host_memory_bandwidth / 1e9)
                                        : "not modelled";
}

PlatformBuilder build_cluster(ClusterShape shape, NodeSpec node, LinkSpec switch_link, std::string description) {
  return detail::fabric_platform([shape, node, switch_link, description] {
    using Links = std::array<std::vector<simgrid::s4u::Link*>, kClusterLinkKinds>;
    auto links = std::make_shared<Links>();
    PathZone zone(shape.lone_node ? "accelerator_node" : "multi_node_cluster",
                  [links, shape](int from, int to, Route& route) {
                    thread_local std::vector<ClusterLink> refs;
                    refs.clear();
                    cluster_route(shape, from, to, refs);
                    for (const auto& ref : refs)
                      route.push_back((*links)[static_cast<std::size_t>(ref.kind)][static_cast<std::size_t>(ref.index)]);
                  });
    auto add = [&](Kind kind, int index, const LinkSpec& spec) {
      auto& table = (*links)[static_cast<std::size_t>(kind)];
      if (table.size() <= static_cast<std::size_t>(index)) table.resize(static_cast<std::size_t>(index) + 1, nullptr);
      table[static_cast<std::size_t>(index)] = add_link(zone, cluster_link_name(shape, {kind, index}), spec);
    };

    Platform platform;
    platform.description = description;
    const int d = shape.devices_per_node;
    for (int n = 0; n < shape.num_nodes; ++n) {
      const std::string prefix = shape.lone_node ? "" : fmt::format("node{}.", n);
      auto* cpu = zone.add_host(prefix + "host", node.host_speed, -1 - n);
      if (n == 0) platform.host_cpu = cpu->get_name();
      const std::string reducing_switch =
          shape.reducing_switch
              ? zone.add_host(prefix + "nvswitch", kDeviceHostSpeed, shape.switch_endpoint(n))->get_name()
              : std::string();
      if (shape.host_memory) add(Kind::host_memory, n, {node.host_memory_bandwidth, 0});
      for (int k = 0; k < d; ++k) {
        const int index = n * d + k;
        const std::string name = fmt::format("{}dev{}", prefix, k);
        platform.devices.push_back({name, zone.add_host(name, kDeviceHostSpeed, index)->get_name(), node.device,
                                    cpu->get_name(), reducing_switch});
        add(Kind::pcie_h2d, index, node.host_link);
        add(Kind::pcie_d2h, index, node.host_link);
        if (node.fabric == NodeFabric::nvswitch) {
          add(Kind::fabric_up, index, node.device_link);
          add(Kind::fabric_down, index, node.device_link);
        } else {
          for (int j = 0; j < d; ++j)
            if (j != k) add(Kind::pair, index * d + j, node.device_link);
        }
        add(Kind::nic_up, index, node.nic);
        add(Kind::nic_down, index, node.nic);
      }
    }
    const int spines = shape.num_spines();
    for (int edge = 0; spines > 0 && edge < shape.num_edge_switches(); ++edge)
      for (int spine = 0; spine < spines; ++spine) {
        add(Kind::spine_up, edge * spines + spine, switch_link);
        add(Kind::spine_down, edge * spines + spine, switch_link);
      }
    zone.seal();
    platform.dimensions = {d};
    if (!shape.lone_node) platform.dimensions.push_back(shape.num_nodes);
    platform.nccl = platform_nccl(node);
    platform.rccl = node.rccl;
    platform.full_mesh_nodes = node.fabric == NodeFabric::full_mesh;
    return platform;
  });
}

void check_node(const std::string& what, const NodeSpec& node) {
  check_at_least(what, "devices_per_node", node.devices_per_node, 1);
  if (node.fabric != NodeFabric::nvswitch && node.fabric != NodeFabric::full_mesh)
    throw ValueError(fmt::format("{}: fabric must be nvswitch or full_mesh (got {})", what,
                                 static_cast<int>(node.fabric)));
  if (node.fabric == NodeFabric::full_mesh && node.devices_per_node > kMaxFullMeshDevices)
    throw ValueError(fmt::format("{}: a full_mesh node has at most {} devices (got {}): a link per ordered pair",
                                 what, kMaxFullMeshDevices, node.devices_per_node));
  check_link(what + " device_link", node.device_link);
  check_link(what + " host_link", node.host_link);
  if (!(node.host_memory_bandwidth >= 0) || std::isinf(node.host_memory_bandwidth))
    throw ValueError(fmt::format("{}: host_memory_bandwidth must be finite and >= 0, 0 meaning not modelled (got {} B/s)",
                                 what, node.host_memory_bandwidth));
  check_link(what + " nic", node.nic);
  if (!(node.host_speed > 0) || std::isinf(node.host_speed))
    throw ValueError(fmt::format("{}: host_speed must be positive and finite (got {} FLOP/s)", what, node.host_speed));
  check_device(what + " device", node.device);
}

ClusterShape node_shape(const NodeSpec& node) {
  ClusterShape shape;
  shape.node_name = node.name;
  shape.devices_per_node = node.devices_per_node;
  shape.fabric = node.fabric;
  shape.host_memory = node.host_memory_bandwidth > 0;
  shape.reducing_switch = node.fabric == NodeFabric::nvswitch && node.nccl && node.nccl->nvls_efficiency > 0;
  return shape;
}

}  // namespace spmdsim::topologies::detail
