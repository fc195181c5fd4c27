#include "path_zone.hpp"

#include <memory>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace spmdsim::topologies {
namespace {

namespace routing = simgrid::kernel::routing;

// The SimGrid side: asks the route function each time a communication needs a route.
class FunctionRoutedZone : public routing::NetZoneImpl {
 public:
  FunctionRoutedZone(const std::string& name, PathZone::RouteFunction route,
                     std::shared_ptr<std::unordered_map<unsigned long, int>> endpoint_of)
      : NetZoneImpl(name), route_(std::move(route)), endpoint_of_(std::move(endpoint_of)) {}

  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst, routing::Route* into,
                       double* latency) override {
    std::vector<simgrid::s4u::Link*> links;
    route_(endpoint_of_->at(src->id()), endpoint_of_->at(dst->id()), links);
    for (auto* link : links) {
      into->link_list_.push_back(link->get_impl());
      if (latency != nullptr) *latency += link->get_latency();
    }
  }

 private:
  PathZone::RouteFunction route_;
  std::shared_ptr<std::unordered_map<unsigned long, int>> endpoint_of_;
};

}  // namespace

PathZone::PathZone(const std::string& name, RouteFunction route)
    : endpoint_of_(std::make_shared<std::unordered_map<unsigned long, int>>()) {
  // The first zone of an engine becomes its root; a later one goes under the root.
  auto* root = simgrid::s4u::Engine::get_instance()->get_netzone_root();
  auto* impl = new FunctionRoutedZone(name, std::move(route), endpoint_of_);  // owned by SimGrid's zone tree
  zone_ = impl->get_iface();
  if (root != nullptr) zone_->set_parent(root);
}

simgrid::s4u::Host* PathZone::add_host(const std::string& name, double speed, int endpoint) {
  auto* host = zone_->create_host(name, speed);
  (*endpoint_of_)[host->get_netpoint()->id()] = endpoint;
  return host;
}

simgrid::s4u::Link* PathZone::add_link(const std::string& name, double bandwidth, double latency) {
  return zone_->create_link(name, bandwidth)->set_latency(latency)->seal();
}

void PathZone::seal() { zone_->seal(); }

}  // namespace spmdsim::topologies
